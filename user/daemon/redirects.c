// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* redirects.c - the parsers of redirects.h: an nftables ruleset in JSON
 * (jansson) and /proc/net/ip_vs, to the rules and services that take
 * protected ports after XDP. No I/O (redirects_scan.c reads them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "options.h"
#include "redirects.h"

/* The destination ports a rule takes, as ranges; more than this many are
 * taken as every port. */
#define REDIR_MAX_RANGES 64

struct port_ranges {
	__u16 lo[REDIR_MAX_RANGES], hi[REDIR_MAX_RANGES];
	unsigned int nr;
	bool any;    /* every port, or ports it cannot tell */
	bool seen;   /* a port match was read */
};

static void ranges_add(struct port_ranges *r, json_int_t lo, json_int_t hi)
{
	if (lo < 0 || hi > 65535 || lo > hi || r->nr == REDIR_MAX_RANGES) {
		r->any = true;
		return;
	}
	r->lo[r->nr] = (__u16)lo;
	r->hi[r->nr] = (__u16)hi;
	r->nr++;
}

/* A number, or {"range": [A, B]}, of a match's right side or a set. */
static void ranges_add_elem(struct port_ranges *r, json_t *e)
{
	json_t *rg = json_is_object(e) ? json_object_get(e, "range") : NULL;

	if (json_is_integer(e))
		ranges_add(r, json_integer_value(e), json_integer_value(e));
	else if (json_is_array(rg) && json_array_size(rg) == 2 &&
		 json_is_integer(json_array_get(rg, 0)) && json_is_integer(json_array_get(rg, 1)))
		ranges_add(r, json_integer_value(json_array_get(rg, 0)),
			   json_integer_value(json_array_get(rg, 1)));
	else
		r->any = true; /* a service name, a prefix: not told apart */
}

static void ranges_add_elems(struct port_ranges *r, json_t *arr)
{
	size_t i;
	json_t *e;

	if (!json_is_array(arr)) {
		ranges_add_elem(r, arr); /* a set of one element is printed bare */
		return;
	}
	json_array_foreach(arr, i, e)
		ranges_add_elem(r, e);
}

static const char *str_of(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* "FAMILY TABLE NAME": the key of a chain or a set. */
static void obj_key(json_t *o, const char *name_key, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s %s", str_of(o, "family"), str_of(o, "table"),
		 str_of(o, name_key));
}

/* Is @left `tcp dport` or `th dport`? */
static bool is_tcp_dport(json_t *left)
{
	json_t *pl = json_object_get(left, "payload");
	const char *proto = str_of(pl, "protocol"), *field = str_of(pl, "field");

	return json_is_object(pl) && !strcmp(field, "dport") &&
	       (!strcmp(proto, "tcp") || !strcmp(proto, "th"));
}

/* A match on the destination port, into @r; @sets: the named sets. */
static void read_dport_match(json_t *m, json_t *sets, const char *family, const char *table,
			     struct port_ranges *r)
{
	const char *op = str_of(m, "op");
	json_t *right = json_object_get(m, "right");
	char key[256];

	r->seen = true;
	if (strcmp(op, "==") && strcmp(op, "in")) {
		r->any = true; /* != and the rest take more than they name */
		return;
	}
	if (json_is_string(right) && json_string_value(right)[0] == '@') {
		json_t *elem;

		snprintf(key, sizeof(key), "%s %s %s", family, table, json_string_value(right) + 1);
		elem = json_object_get(sets, key);
		if (elem)
			ranges_add_elems(r, elem);
		else
			r->any = true; /* a set without elements listed, or a map */
	} else if (json_is_object(right) && json_object_get(right, "set")) {
		ranges_add_elems(r, json_object_get(right, "set"));
	} else {
		ranges_add_elem(r, right);
	}
}

/* The statement of a rule that takes a connection elsewhere: its name into
 * @what, the port it names into @to_port. False for any other. */
static bool read_nat_stmt(json_t *st, char *what, size_t len, __u16 *to_port)
{
	static const char *const kinds[] = { "redirect", "dnat", "tproxy" };
	json_t *v, *port;
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		v = json_object_get(st, kinds[i]);
		if (!v)
			continue;
		snprintf(what, len, "%s", kinds[i]);
		port = json_is_object(v) ? json_object_get(v, "port") : NULL;
		*to_port = json_is_integer(port) && json_integer_value(port) > 0 &&
				   json_integer_value(port) <= 65535 ?
			   (__u16)json_integer_value(port) : 0;
		return true;
	}
	v = json_object_get(st, "xt");
	if (json_is_object(v) && !strcmp(str_of(v, "type"), "target")) {
		const char *name = str_of(v, "name");

		if (!strcmp(name, "REDIRECT") || !strcmp(name, "DNAT") || !strcmp(name, "TPROXY")) {
			snprintf(what, len, "xt %s", name);
			*to_port = 0; /* iptables-nft keeps the target's data opaque */
			return true;
		}
	}
	return false;
}

static void note_add(struct redir_note *arr, unsigned int *nr, unsigned int *over,
		     const struct redir_note *n)
{
	if (*nr < REDIR_MAX_NOTES)
		arr[(*nr)++] = *n;
	else
		(*over)++;
}

/* Does @r take port @p? */
static bool ranges_take(const struct port_ranges *r, unsigned int p)
{
	unsigned int i;

	if (r->any || !r->nr)
		return true;
	for (i = 0; i < r->nr; i++)
		if (p >= r->lo[i] && p <= r->hi[i])
			return true;
	return false;
}

/* What a rule or service that takes @r (to @tmpl's port) means for the
 * protected ports: a note if it takes any (one a range it takes, with
 * every port protected), and one if it sends a port not protected to a
 * protected one. */
static void judge_ranges(const struct port_ranges *r, const __u16 *ports, int nr_ports,
			 const struct redir_note *tmpl, struct redir_found *f)
{
	struct redir_note n = *tmpl;
	bool unprotected = false;
	unsigned int i;
	int p;

	if (!nr_ports) {
		if (r->any || !r->nr) {
			n.lo = 0;
			n.hi = 65535;
			note_add(f->hit, &f->nr_hit, &f->hit_over, &n);
			return;
		}
		for (i = 0; i < r->nr; i++) {
			n.lo = r->lo[i];
			n.hi = r->hi[i];
			note_add(f->hit, &f->nr_hit, &f->hit_over, &n);
		}
		return;
	}
	n.lo = n.hi = 0;
	n.which = 0;
	for (p = 0; p < nr_ports && p < 64; p++)
		if (ranges_take(r, ports[p]))
			n.which |= 1ULL << p;
	if (n.which)
		note_add(f->hit, &f->nr_hit, &f->hit_over, &n);
	/* A port not protected that the rule sends to a protected one:
	 * the first range wider than the protected ports in it. */
	n.which = 0;
	if (r->any || !r->nr) {
		n.lo = 0;
		n.hi = 65535;
		unprotected = true;
	}
	for (i = 0; i < r->nr && !unprotected; i++) {
		unsigned int width = (unsigned int)r->hi[i] - r->lo[i] + 1, in = 0;

		for (p = 0; p < nr_ports; p++)
			in += ports[p] >= r->lo[i] && ports[p] <= r->hi[i];
		if (in < width) {
			unprotected = true;
			n.lo = r->lo[i];
			n.hi = r->hi[i];
		}
	}
	if (unprotected && tmpl->to_port && options_port_protected(ports, nr_ports, tmpl->to_port))
		note_add(f->into, &f->nr_into, &f->into_over, &n);
}

/* The named sets' elements by "FAMILY TABLE NAME", and the hook of each
 * chain that has one. */
static void index_objects(json_t *arr, json_t *sets, json_t *hooks)
{
	char key[256];
	json_t *o, *v;
	size_t i;

	json_array_foreach(arr, i, o) {
		if ((v = json_object_get(o, "set")) && json_object_get(v, "elem")) {
			obj_key(v, "name", key, sizeof(key));
			json_object_set(sets, key, json_object_get(v, "elem"));
		} else if ((v = json_object_get(o, "chain")) && json_object_get(v, "hook")) {
			obj_key(v, "name", key, sizeof(key));
			json_object_set(hooks, key, json_object_get(v, "hook"));
		}
	}
}

int redirects_parse_nft(const char *json, const __u16 *ports, int nr_ports,
			struct redir_found *f)
{
	json_t *root, *arr, *sets = NULL, *hooks = NULL, *o, *rule, *e;
	int err = 0;
	size_t i, j;

	root = json_loads(json, 0, NULL);
	arr = json_object_get(root, "nftables");
	if (!json_is_array(arr)) {
		json_decref(root);
		return -EINVAL;
	}
	sets = json_object();
	hooks = json_object();
	if (!sets || !hooks) {
		err = -ENOMEM;
		goto out;
	}
	index_objects(arr, sets, hooks);
	json_array_foreach(arr, i, o) {
		struct port_ranges r = { .nr = 0 };
		struct redir_note n = { .lo = 0 };
		const char *family, *table, *hook;
		bool nat = false;
		char key[256];

		rule = json_object_get(o, "rule");
		if (!json_is_object(rule))
			continue;
		family = str_of(rule, "family");
		table = str_of(rule, "table");
		/* A chain that hooks elsewhere (output: this host's own
		 * connections) takes nothing that came in; one without a
		 * hook may be jumped to from prerouting. */
		obj_key(rule, "chain", key, sizeof(key));
		hook = json_string_value(json_object_get(hooks, key));
		if (hook && strcmp(hook, "prerouting"))
			continue;
		json_array_foreach(json_object_get(rule, "expr"), j, e) {
			json_t *m = json_object_get(e, "match");

			if (json_is_object(m) && is_tcp_dport(json_object_get(m, "left")))
				read_dport_match(m, sets, family, table, &r);
			else if (!nat && read_nat_stmt(e, n.what, sizeof(n.what), &n.to_port))
				nat = true;
			else if (json_object_get(e, "xt") && !nat)
				r.any = true; /* an xt match (multiport...) may name ports */
		}
		if (!nat)
			continue;
		/* Cut where a name is long: the note names, it is no key. */
		snprintf(n.where, sizeof(n.where), "nftables %.62s", key);
		judge_ranges(&r, ports, nr_ports, &n, f);
	}
out:
	json_decref(sets);
	json_decref(hooks);
	json_decref(root);
	return err;
}

/* "IPVS A.B.C.D:PORT" of an IPv4 address in hex ("C6120002"); an IPv6
 * one ("[2001:0db8:...]") as it is. */
static void ipvs_addr_str(const char *hex, char *buf, size_t len, unsigned long port)
{
	unsigned long a;
	char *stop;

	errno = 0;
	a = strtoul(hex, &stop, 16);
	if (hex[0] != '[' && !errno && !*stop && strlen(hex) == 8)
		snprintf(buf, len, "IPVS %lu.%lu.%lu.%lu:%lu", a >> 24, (a >> 16) & 255,
			 (a >> 8) & 255, a & 255, port);
	else
		snprintf(buf, len, "IPVS %s:%lu", hex, port);
}

int redirects_parse_ipvs(const char *text, const __u16 *ports, int nr_ports,
			 struct redir_found *f)
{
	const char *line = text;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[160], proto[8], addr[96], *colon, *stop;
		struct port_ranges r = { .nr = 0 };
		struct redir_note n = { .lo = 0 };
		unsigned long port;

		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = '\0';
		line = end ? end + 1 : NULL;
		/* Service lines start in the first column; their real
		 * servers are indented ("  -> "), the headers are words. */
		if (strncmp(buf, "TCP ", 4) && strncmp(buf, "FWM ", 4))
			continue;
		if (sscanf(buf, "%7s %95s", proto, addr) != 2)
			return -EINVAL;
		if (!strcmp(proto, "FWM")) {
			r.any = true;
			snprintf(n.what, sizeof(n.what), "IPVS fwmark");
			snprintf(n.where, sizeof(n.where), "IPVS fwmark %s", addr);
		} else {
			/* ADDR:PORT in hex, an IPv6 address in brackets. */
			colon = strrchr(addr, ':');
			if (!colon)
				return -EINVAL;
			errno = 0;
			port = strtoul(colon + 1, &stop, 16);
			if (errno || *stop || stop == colon + 1 || port > 65535)
				return -EINVAL;
			ranges_add(&r, (json_int_t)port, (json_int_t)port);
			snprintf(n.what, sizeof(n.what), "IPVS TCP");
			*colon = '\0';
			ipvs_addr_str(addr, n.where, sizeof(n.where), port);
		}
		judge_ranges(&r, ports, nr_ports, &n, f);
	}
	return 0;
}

void redir_note_str(const struct redir_note *n, const __u16 *ports, int nr_ports, char *buf,
		    size_t len)
{
	char list[160], to[16] = "";
	int p, count = 0, listed = 0;
	size_t used = 0;

	for (p = 0; n->which && p < nr_ports && p < 64; p++)
		count += (n->which >> p) & 1;
	if (count) {
		/* Cut past the buffer: 64 ports do not fit a line. */
		used = (size_t)snprintf(list, sizeof(list), "port%s", count > 1 ? "s" : "");
		for (p = 0; p < nr_ports && p < 64 && used < sizeof(list); p++)
			if ((n->which >> p) & 1)
				used += (size_t)snprintf(list + used, sizeof(list) - used, "%s %u",
							 listed++ ? "," : "", ports[p]);
	} else if (n->lo == 0 && n->hi == 65535) {
		snprintf(list, sizeof(list), "every port");
	} else if (n->lo == n->hi) {
		snprintf(list, sizeof(list), "port %u", n->lo);
	} else {
		snprintf(list, sizeof(list), "ports %u-%u", n->lo, n->hi);
	}
	if (n->to_port)
		snprintf(to, sizeof(to), " to :%u", n->to_port);
	snprintf(buf, len, "%s (%s%s, %s)", list, n->what, to, n->where);
}
