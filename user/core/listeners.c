// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* listeners.c - the listeners judged one by one (listeners.h): drops by
 * listener, trouble by listener, and which trouble is the service's.
 */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "listeners.h"

/* @cur's listener @i in @prev, or NULL. The kernel dumps its listeners in
 * the same order from one tick to the next: the same index is tried
 * first, so a steady set costs one compare a listener. */
static const struct listener_sample *find_prev(const struct listener_table *prev,
					       const struct listener_table *cur, int i)
{
	__u64 ino = cur->l[i].id.ino;
	int j;

	if (i < prev->n && prev->l[i].id.ino == ino)
		return &prev->l[i];
	for (j = 0; j < prev->n; j++)
		if (prev->l[j].id.ino == ino)
			return &prev->l[j];
	return NULL;
}

/* The drops of @l since @p (none without @p, or without both counters). */
static __u32 drops_since(const struct listener_sample *p, const struct listener_sample *l)
{
	if (!p || !p->have_drops || !l->have_drops)
		return 0;
	return (__u32)(l->drops - p->drops);
}

__u64 listener_drops_delta(const struct listener_table *prev, const struct listener_table *cur)
{
	__u64 sum = 0;
	int i;

	for (i = 0; i < cur->n; i++)
		sum += drops_since(find_prev(prev, cur, i), &cur->l[i]);
	return sum;
}

static bool deep(const struct listener_sample *l, double depth_frac)
{
	if (!l->backlog)
		return l->depth > 0;
	return (double)l->depth > depth_frac * (double)l->backlog;
}

/* Keep the LISTENERS_TOLD longest stuck, longest first. */
static void tell(struct listener_verdict *v, const struct listener_sample *l)
{
	int k = v->told < LISTENERS_TOLD ? v->told++ : LISTENERS_TOLD;

	if (k == LISTENERS_TOLD) {
		if (l->stuck_ticks <= v->stuck_ticks[LISTENERS_TOLD - 1])
			return;
		k = LISTENERS_TOLD - 1;
	}
	for (; k > 0 && v->stuck_ticks[k - 1] < l->stuck_ticks; k--) {
		v->stuck_id[k] = v->stuck_id[k - 1];
		v->stuck_ticks[k] = v->stuck_ticks[k - 1];
	}
	v->stuck_id[k] = l->id;
	v->stuck_ticks[k] = l->stuck_ticks;
}

/* The listeners of each (group, port) of a dump, and how many of them are
 * calm: a few distinct ports a dump, so a short list searched linearly. */
struct calm_ports {
	int n;
	int group[MAX_LISTENERS];
	__u16 port[MAX_LISTENERS];
	int calm[MAX_LISTENERS];
	int listeners[MAX_LISTENERS];
	bool own[MAX_LISTENERS]; /* whole in trouble, of its own */
	int entry[MAX_LISTENERS]; /* its entry in v->ports; -1: none */
};

static int calm_index(struct calm_ports *c, int group, __u16 port)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (c->group[i] == group && c->port[i] == port)
			return i;
	c->group[c->n] = group;
	c->port[c->n] = port;
	c->calm[c->n] = 0;
	c->listeners[c->n] = 0;
	c->own[c->n] = false;
	c->entry[c->n] = -1;
	return c->n++;
}

bool port_accepts_has(const struct port_accepts *acc, __u16 port)
{
	int i;

	for (i = 0; acc && i < acc->n && i < PORTS_ACCEPTING; i++)
		if (acc->port[i] == port)
			return true;
	return false;
}

/* Is port @k of @c in trouble of its own: whole in trouble while another
 * port of its group has a calm listener and accepts? */
static bool own_trouble(const struct calm_ports *c, int k, const struct port_accepts *acc)
{
	int j;

	if (!acc || c->calm[k] > 0)
		return false;
	for (j = 0; j < c->n; j++)
		if (j != k && c->group[j] == c->group[k] && c->calm[j] > 0 &&
		    port_accepts_has(acc, c->port[j]))
			return true;
	return false;
}

void listeners_judge_ports(const struct listener_table *prev, struct listener_table *cur,
			   int ngroups, double depth_frac, bool overflows_moved,
			   const struct port_accepts *acc, struct listener_verdict *v)
{
	/* Three passes: trouble listener by listener; with the calm
	 * listeners of each port counted, which ports are whole in trouble
	 * and whether of their own; then whose trouble each listener's is. */
	__u32 ovf[MAX_LISTENERS], was[MAX_LISTENERS];
	bool trouble[MAX_LISTENERS];
	int slot[MAX_LISTENERS];
	static __thread struct calm_ports calm;
	int i, k, n = cur->n < MAX_LISTENERS ? cur->n : MAX_LISTENERS;

	memset(v, 0, sizeof(*v));
	calm.n = 0;
	if (ngroups > QUEUE_GROUPS)
		ngroups = QUEUE_GROUPS;
	v->judged = n;
	for (i = 0; i < n; i++) {
		struct listener_sample *l = &cur->l[i];
		const struct listener_sample *p = find_prev(prev, cur, i);
		__u32 d = drops_since(p, l);

		v->drops += d;
		ovf[i] = overflows_moved ? d : 0;
		was[i] = p ? p->stuck_ticks : 0;
		trouble[i] = ovf[i] > 0 || deep(l, depth_frac);
		slot[i] = -1;
		if (l->group < 0 || l->group >= ngroups)
			continue;
		slot[i] = calm_index(&calm, l->group, l->id.port);
		calm.listeners[slot[i]]++;
		if (!trouble[i])
			calm.calm[slot[i]]++;
	}
	for (k = 0; k < calm.n; k++) {
		if (calm.calm[k] > 0 || calm.listeners[k] == 0)
			continue;
		calm.own[k] = own_trouble(&calm, k, acc);
		if (v->nr_ports < PORTS_JUDGED) {
			v->ports[v->nr_ports] = (struct port_trouble){
				.port = calm.port[k], .group = calm.group[k], .own = calm.own[k],
			};
			calm.entry[k] = v->nr_ports++;
		}
		v->ports_own += calm.own[k];
	}
	for (i = 0; i < n; i++) {
		struct listener_sample *l = &cur->l[i];
		struct queue_group *g;

		l->stuck_ticks = 0;
		if (slot[i] < 0)
			continue;
		if (trouble[i] && calm.calm[slot[i]] > 0) {
			l->stuck_ticks = was[i] + 1;
			v->stuck++;
			v->stuck_overflows += ovf[i];
			tell(v, l);
			continue;
		}
		if (calm.entry[slot[i]] >= 0) {
			struct port_trouble *pt = &v->ports[calm.entry[slot[i]]];

			pt->listeners++;
			pt->depth += l->depth;
			pt->backlog += l->backlog;
			pt->overflows += ovf[i];
		}
		if (calm.own[slot[i]]) {
			v->port_overflows += ovf[i];
			continue;
		}
		g = &v->groups[l->group];
		v->overflows += ovf[i];
		g->depth += l->depth;
		g->backlog += l->backlog;
	}
}

void listeners_judge(const struct listener_table *prev, struct listener_table *cur, int ngroups,
		     double depth_frac, bool overflows_moved, struct listener_verdict *v)
{
	listeners_judge_ports(prev, cur, ngroups, depth_frac, overflows_moved, NULL, v);
}

bool listener_reachable(__u8 family, const __u8 addr[16], __u32 bound_if, __u32 ifindex)
{
	static const __u8 v6_loopback[16] = { [15] = 1 };
	static const __u8 v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (bound_if && ifindex && bound_if != ifindex)
		return false;
	if (family == AF_INET)
		return addr[0] != 127;
	if (!memcmp(addr, v4_mapped, sizeof(v4_mapped)))
		return addr[12] != 127;
	return memcmp(addr, v6_loopback, sizeof(v6_loopback)) != 0;
}

void listener_name(const struct listener_id *id, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (id->family == AF_INET6) {
		inet_ntop(AF_INET6, id->addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, id->port);
	} else {
		inet_ntop(AF_INET, id->addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, id->port);
	}
}
