// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* handle.c - the maps of a loaded or adopted shedd, read and written
 * through its skeleton: the controller's state and counters, the rates and
 * their lease, the settings' tx_blocked, the stats and the fairness maps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "alloc.h"
#include "handle.h"
#include "log.h"
#include "settings.h"
#include "shedd.skel.h"

int log_libbpf(const char *step, int err)
{
	char buf[128];

	libbpf_strerror(err, buf, sizeof(buf));
	log_err("%s: %s", step, buf);
	return err;
}

int loader_read_tx_blocked(struct loader *l, __u8 *v)
{
	struct shedd_config cfg;
	int err = settings_read(bpf_map__fd(l->skel->maps.settings),
				bpf_map__fd(l->skel->maps.settings_cur), &cfg);

	if (err) {
		log_err("read settings: %s", strerror(-err));
		return err;
	}
	*v = cfg.tx_blocked;
	return 0;
}

/* Only the daemon's tick writes settings while it runs (a reload runs in
 * the same thread), so the read and the write need no lock. */
int loader_write_tx_blocked(struct loader *l, __u8 v)
{
	int fd = bpf_map__fd(l->skel->maps.settings), err;
	int cur_fd = bpf_map__fd(l->skel->maps.settings_cur);
	struct shedd_config cfg;

	err = settings_read(fd, cur_fd, &cfg);
	if (!err) {
		cfg.tx_blocked = v;
		err = settings_publish(fd, cur_fd, &cfg);
	}
	if (!err) {
		l->tx_blocked = v;
		return 0;
	}
	log_err("write settings.tx_blocked=%u: %s", v, strerror(-err));
	return err;
}

int loader_read_tun_checks(struct loader *l, struct shedd_tun_checks *sum)
{
	struct shedd_tun_checks *percpu = calloc((size_t)l->ncpus, sizeof(*percpu));
	__u32 zero = 0;
	int i, err = 0;

	memset(sum, 0, sizeof(*sum));
	if (!percpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.tun_checks), &zero, percpu)) {
		err = -errno;
	} else {
		for (i = 0; i < l->ncpus; i++) {
			sum->no_device += percpu[i].no_device;
			sum->acks += percpu[i].acks;
		}
	}
	free(percpu);
	return err;
}

int loader_read_syn_checks(struct loader *l, struct shedd_syn_checks *sum)
{
	struct shedd_syn_checks *percpu = calloc((size_t)l->ncpus, sizeof(*percpu));
	__u32 zero = 0;
	int i, err = 0;

	memset(sum, 0, sizeof(*sum));
	if (!percpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.syn_checks), &zero, percpu))
		err = -errno;
	else
		for (i = 0; i < l->ncpus; i++)
			sum->syn_signed += percpu[i].syn_signed;
	free(percpu);
	return err;
}

int loader_read_tun_stats(struct loader *l, struct shedd_tun_stats *sum)
{
	struct shedd_tun_stats *percpu = calloc((size_t)l->ncpus, sizeof(*percpu));
	__u32 zero = 0;
	int i, err = 0;

	memset(sum, 0, sizeof(*sum));
	if (!percpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.tun_stats), &zero, percpu)) {
		err = -errno;
	} else {
		for (i = 0; i < l->ncpus; i++) {
			sum->decap += percpu[i].decap;
			sum->judged += percpu[i].judged;
			sum->refused += percpu[i].refused;
		}
	}
	free(percpu);
	return err;
}

int loader_write_rates(struct loader *l, const struct shedd_class_rate *next, __u64 now_ns)
{
	int fd = bpf_map__fd(l->skel->maps.rates);
	int res_fd = bpf_map__fd(l->skel->maps.reserve);
	__u32 c;

	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		struct shedd_reserve res = { 0 };
		struct shedd_rate cur = { 0 };

		/* Read what is published and when the reserve last refilled, so
		 * the change is published piecewise (alloc_publish()). */
		if (bpf_map_lookup_elem_flags(fd, &c, &cur, BPF_F_LOCK) ||
		    bpf_map_lookup_elem_flags(res_fd, &c, &res, BPF_F_LOCK))
			return -errno;
		alloc_publish(&cur.r, &next[c], res.s.last_ns, now_ns);
		if (bpf_map_update_elem(fd, &c, &cur, BPF_F_LOCK))
			return -errno;
	}
	return 0;
}

int loader_write_lease(struct loader *l, const struct shedd_lease *v)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.lease), &zero, v, BPF_F_LOCK))
		return -errno;
	return 0;
}

int loader_read_lease(struct loader *l, struct shedd_lease *v)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem_flags(bpf_map__fd(l->skel->maps.lease), &zero, v, BPF_F_LOCK))
		return -errno;
	return 0;
}

int loader_read_total_rate(struct loader *l, double *total)
{
	int fd = bpf_map__fd(l->skel->maps.rates);
	__u32 c;

	*total = 0;
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		struct shedd_rate r;

		if (bpf_map_lookup_elem_flags(fd, &c, &r, BPF_F_LOCK))
			return -errno;
		*total += (double)r.r.rate_per_sec;
	}
	return 0;
}

int loader_read_stats(struct loader *l, struct shedd_stats *percpu)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.stats), &zero, percpu))
		return -errno;
	return 0;
}

const struct shedd_fair_cell *loader_fair_cells(struct loader *l)
{
	size_t len = (size_t)FAIR_CELLS * sizeof(struct shedd_fair_cell);
	void *m;

	if (l->fair_cells)
		return l->fair_cells;
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, bpf_map__fd(l->skel->maps.fair_cells), 0);
	if (m == MAP_FAILED) {
		log_warn("map the fairness sketch: %s; each class is held as one source",
			 strerror(errno));
		return NULL;
	}
	l->fair_cells = m;
	return l->fair_cells;
}

int loader_write_fair(struct loader *l, const struct shedd_fair_class *cfg)
{
	int fd = bpf_map__fd(l->skel->maps.fair_config);
	__u32 c;

	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		if (bpf_map_update_elem(fd, &c, &cfg[c], BPF_ANY))
			return -errno;
	return 0;
}

int loader_read_fair_stats(struct loader *l, struct shedd_fair_stats *sum)
{
	int fd = bpf_map__fd(l->skel->maps.fair_stats), i;
	struct shedd_fair_stats *percpu = calloc((size_t)l->ncpus, sizeof(*percpu));
	__u32 c;

	if (!percpu)
		return -ENOMEM;
	memset(sum, 0, sizeof(*sum) * SHEDD_NR_CLASSES);
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		if (bpf_map_lookup_elem(fd, &c, percpu)) {
			int err = -errno;

			free(percpu);
			return err;
		}
		for (i = 0; i < l->ncpus; i++) {
			sum[c].counted += percpu[i].counted;
			sum[c].checked += percpu[i].checked;
			sum[c].shed += percpu[i].shed;
			sum[c].over += percpu[i].over;
		}
	}
	free(percpu);
	return 0;
}

int loader_read_ctl(struct loader *l, struct shedd_ctl_state *st)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.ctl_state), &zero, st))
		return -errno;
	return 0;
}

int loader_write_ctl(struct loader *l, const struct shedd_ctl_state *st)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.ctl_state), &zero, st, BPF_ANY))
		return -errno;
	return 0;
}

int loader_read_daemon_stats(struct loader *l, struct shedd_daemon_stats *st)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.daemon_stats), &zero, st))
		return -errno;
	return 0;
}

int loader_write_daemon_stats(struct loader *l, const struct shedd_daemon_stats *st)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.daemon_stats), &zero, st, BPF_ANY))
		return -errno;
	return 0;
}
