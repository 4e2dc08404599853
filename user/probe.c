// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* probe.c - read the kernel: the helpers the XDP program calls (the SYN
 * cookie helpers among them), does vmlinux have the kfunc of the tc
 * hand-off, and the
 * sysctls of the network namespace (tcp_syncookies, tcp_timestamps,
 * tcp_rmem, rmem_max, tcp_ecn). Changes only the sysctls a hand-off needs,
 * and says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "probe.h"

static bool has_xdp_helper(enum bpf_func_id id)
{
	/* 1: the verifier knows it in XDP; 0: it does not; <0: cannot tell,
	 * which is as good as no. */
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, id, NULL) == 1;
}

void probe_features(struct shedd_features *f)
{
	struct utsname u;
	struct btf *vmlinux;

	memset(f, 0, sizeof(*f));
	snprintf(f->release, sizeof(f->release), "%s", uname(&u) ? "?" : u.release);
	f->cookie_helpers = has_xdp_helper(BPF_FUNC_tcp_raw_gen_syncookie_ipv4) &&
			    has_xdp_helper(BPF_FUNC_tcp_raw_gen_syncookie_ipv6) &&
			    has_xdp_helper(BPF_FUNC_tcp_raw_check_syncookie_ipv4) &&
			    has_xdp_helper(BPF_FUNC_tcp_raw_check_syncookie_ipv6);
	f->xdp_load_bytes = has_xdp_helper(BPF_FUNC_xdp_load_bytes);
	f->loop = has_xdp_helper(BPF_FUNC_loop);
	f->sk_lookup = has_xdp_helper(BPF_FUNC_skc_lookup_tcp) &&
		       has_xdp_helper(BPF_FUNC_sk_release);
	f->gen_syncookie = has_xdp_helper(BPF_FUNC_tcp_gen_syncookie);
	vmlinux = btf__load_vmlinux_btf();
	f->vmlinux_btf = vmlinux != NULL;
	if (vmlinux) {
		f->reqsk_kfunc =
			btf__find_by_name_kind(vmlinux, "bpf_sk_assign_tcp_reqsk", BTF_KIND_FUNC) > 0;
		btf__free(vmlinux);
	}
}

/* One line of a /proc/sys file into @buf. */
static int sysctl_read_text(const char *name, char *buf, size_t len)
{
	char path[256];
	ssize_t n;
	int fd, err;

	if (sysctl_path(name, path, sizeof(path)))
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	return 0;
}

int sysctl_read_u64(const char *name, __u64 *v)
{
	char buf[64];
	int err = sysctl_read_text(name, buf, sizeof(buf));

	if (err)
		return err;
	return parse_sysctl_u64(buf, v) ? -EINVAL : 0;
}

static int sysctl_write_u64(const char *name, __u64 v)
{
	char path[256], buf[32];
	int fd, n, err = 0;

	if (sysctl_path(name, path, sizeof(path)))
		return -EINVAL;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)v);
	if (write(fd, buf, (size_t)n) != n)
		err = errno ? -errno : -EIO;
	close(fd);
	return err;
}

int probe_apply_sysctls(__u8 handoff)
{
	const struct sysctl_need *needs;
	int i, n = verify_sysctl_needs(handoff, &needs), err;
	__u64 cur;

	for (i = 0; i < n; i++) {
		const struct sysctl_need *w = &needs[i];

		err = sysctl_read_u64(w->name, &cur);
		if (err) {
			log_err("verified admission: read %s: %s", w->name,
				strerror(-err));
			return err;
		}
		if (cur >= w->min && cur <= w->max)
			continue;
		errno = 0;
		err = sysctl_write_u64(w->name, w->set);
		if (err) {
			log_err("verified admission: set %s=%llu: %s; refusing to "
				"start (or run with --verify off)", w->name,
				(unsigned long long)w->set, strerror(-err));
			return err;
		}
		log_notice("set %s=%llu (was %llu)", w->name,
			   (unsigned long long)w->set, (unsigned long long)cur);
	}
	return 0;
}

static __u64 host_rmem_max;
static bool host_rmem_max_known;

void probe_host_rmem_max(void)
{
	host_rmem_max_known = sysctl_read_u64("net.core.rmem_max", &host_rmem_max) == 0;
}

int probe_syn_options(__u8 *wscale, __u8 *ecn)
{
	static const char *const rmem = "net.ipv4.tcp_rmem";
	const char *name = rmem;
	__u64 tcp_rmem_max, rmem_max, tcp_ecn;
	char buf[128];
	int err;

	err = sysctl_read_text(rmem, buf, sizeof(buf));
	if (!err && parse_tcp_rmem_max(buf, &tcp_rmem_max))
		err = -EINVAL;
	if (!err)
		err = sysctl_read_u64(name = "net.core.rmem_max", &rmem_max);
	/* Before 6.15 the kernel sizes every namespace's windows with the
	 * host's rmem_max, which only the initial namespace shows. */
	if (err == -ENOENT) {
		err = 0;
		if (host_rmem_max_known) {
			rmem_max = host_rmem_max;
		} else {
			rmem_max = 0;
			log_warn("verified admission: net.core.rmem_max is the host's on this "
				 "kernel and not visible in this network namespace: the SYN-ACK's "
				 "window scale follows net.ipv4.tcp_rmem alone (start shedd with "
				 "--netns, not inside the namespace, to read it)");
		}
	}
	if (!err)
		err = sysctl_read_u64(name = "net.ipv4.tcp_ecn", &tcp_ecn);
	if (err) {
		log_err("verified admission: read %s: %s", name, strerror(-err));
		return err;
	}
	*wscale = syn_wscale(tcp_rmem_max, rmem_max);
	*ecn = syn_ecn(tcp_ecn);
	return 0;
}
