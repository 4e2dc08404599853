// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* probe.c - read the kernel: the helpers the XDP program calls (the SYN
 * cookie helpers among them), does vmlinux have the kfunc of the tc
 * hand-off, and the
 * sysctls of the network namespace (tcp_syncookies, tcp_timestamps,
 * tcp_rmem, rmem_max, tcp_ecn). Changes only the sysctls a hand-off needs,
 * and says so. And whether XDP_TX frames leave the interface: the driver's
 * ethtool statistics and xdp-features (xdptx.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "probe.h"
#include "sysctls.h"
#include "xdptx.h"

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

static __u64 host_rmem_max;
static bool host_rmem_max_known;
static bool rmem_max_warned;

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
		} else if (rmem_max_warned) {
			rmem_max = 0;
		} else {
			rmem_max = 0;
			rmem_max_warned = true; /* read again every second: said once */
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

int probe_syn_opts_off(__u8 *off)
{
	static const char *const names[] = { "net.ipv4.tcp_timestamps", "net.ipv4.tcp_sack",
					      "net.ipv4.tcp_window_scaling" };
	__u64 v[3];
	size_t i;
	int err;

	for (i = 0; i < 3; i++) {
		err = sysctl_read_u64(names[i], &v[i]);
		if (err) {
			log_err("verified admission: read %s: %s", names[i], strerror(-err));
			return err;
		}
	}
	*off = syn_opts_off(v[0], v[1], v[2]);
	return 0;
}

int probe_brd4(__u32 *brd, unsigned int max)
{
	struct ifaddrs *ifa, *a;
	unsigned int n = 0, i;
	int err;

	memset(brd, 0, max * sizeof(*brd));
	if (getifaddrs(&ifa)) {
		err = -errno;
		log_err("list the addresses of this network namespace: %s", strerror(errno));
		return err;
	}
	for (a = ifa; a; a = a->ifa_next) {
		__u32 cand, addr, mask;

		if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !a->ifa_netmask)
			continue;
		addr = ((struct sockaddr_in *)(void *)a->ifa_addr)->sin_addr.s_addr;
		mask = ((struct sockaddr_in *)(void *)a->ifa_netmask)->sin_addr.s_addr;
		/* A prefix shorter than /31 has a broadcast address, its last.
		 * (getifaddrs() gives no explicit "brd" reliably: without one
		 * it names the address itself.) */
		if ((ntohl(mask) & 2) || (a->ifa_flags & IFF_LOOPBACK))
			continue;
		cand = addr | ~mask;
		if (cand == 0xffffffffU)
			continue;
		for (i = 0; i < n && brd[i] != cand; i++)
			;
		if (i < n)
			continue;
		if (n == max) {
			log_warn("more than %u IPv4 broadcast addresses in this network "
				 "namespace: SYNs to the others are judged", max);
			break;
		}
		brd[n++] = cand;
	}
	freeifaddrs(ifa);
	return (int)n;
}

int probe_iface_link(const char *iface, struct iface_link *out)
{
	struct ifreq ifr;
	int fd, err = 0;

	memset(out, 0, sizeof(*out));
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		err = -errno;
		log_err("read the link type and MAC address of %s: %s", iface, strerror(errno));
	} else {
		out->type = ifr.ifr_hwaddr.sa_family;
		memcpy(out->mac, ifr.ifr_hwaddr.sa_data, sizeof(out->mac));
		if (ioctl(fd, SIOCGIFMTU, &ifr)) {
			err = -errno;
			log_err("read the MTU of %s: %s", iface, strerror(errno));
		} else {
			out->mtu = ifr.ifr_mtu > 0 ? (__u32)ifr.ifr_mtu : 0;
		}
	}
	if (fd >= 0)
		close(fd);
	return err;
}

int probe_forwarding(const char *iface, int v6)
{
	char path[128], buf[32];
	ssize_t n;
	int fd;

	/* A path, not a sysctl name: an interface name may hold a dot. */
	snprintf(path, sizeof(path), "/proc/sys/net/%s/conf/%s/forwarding", v6 ? "ipv6" : "ipv4",
		 iface);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EINVAL;
	buf[n] = '\0';
	return buf[0] != '0';
}

/* ---- XDP_TX: the driver's word -------------------------------------------- */

/* The netdev generic netlink family (include/uapi/linux/netdev.h, 6.3),
 * which the system headers of older distributions lack. */
#define NETDEV_GENL_NAME "netdev"
#define NETDEV_GENL_CMD_DEV_GET 1
#define NETDEV_GENL_A_DEV_IFINDEX 1
#define NETDEV_GENL_A_DEV_XDP_FEATURES 3
#define NETDEV_GENL_XDP_ACT_NDO_XMIT 4ULL
#define NETDEV_GENL_A_DEV_XDP_RX_METADATA_FEATURES 5
#define NETDEV_GENL_XDP_RX_METADATA_VLAN_TAG 4ULL

static int ethtool_ioctl(const struct xdptx_probe *p, void *cmd)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", p->iface);
	ifr.ifr_data = cmd;
	return ioctl(p->fd, SIOCETHTOOL, &ifr) ? -errno : 0;
}

/* How many ETH_SS_STATS the driver has now (0: none). */
static int stats_count(const struct xdptx_probe *p, __u32 *n)
{
	struct {
		struct ethtool_sset_info hdr;
		__u32 count;
	} info = { .hdr = { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ULL << ETH_SS_STATS } };
	int err = ethtool_ioctl(p, &info);

	if (err == -EOPNOTSUPP) {
		*n = 0;
		return 0;
	}
	if (err)
		return err;
	*n = (info.hdr.sset_mask & (1ULL << ETH_SS_STATS)) ? info.count : 0;
	return 0;
}

/* Room for a few more entries than asked: the kernel writes as many as
 * the driver has when it answers, which a change of queues in between
 * may have raised. */
static size_t stats_room(__u32 n)
{
	return (size_t)n + n / 2 + 16;
}

/* The indices of the XDP_TX error counters among the driver's @n stats. */
static int stats_names(struct xdptx_probe *p, __u32 n)
{
	struct ethtool_gstrings *g;
	__u32 i, *idx = NULL, nr = 0, totals = 0;
	int err, pass;

	free(p->err_idx);
	p->err_idx = NULL;
	p->nr_err = 0;
	p->n_stats = n;
	if (!n)
		return 0;
	g = calloc(1, sizeof(*g) + stats_room(n) * ETH_GSTRING_LEN);
	idx = calloc(n, sizeof(*idx));
	if (!g || !idx) {
		free(g);
		free(idx);
		return -ENOMEM;
	}
	g->cmd = ETHTOOL_GSTRINGS;
	g->string_set = ETH_SS_STATS;
	g->len = n;
	err = ethtool_ioctl(p, g);
	if (!err && g->len != n)
		err = -EAGAIN; /* changed in between: next time */
	/* Two passes: a driver with totals beside its queues' counters of
	 * the same errors (xdptx_is_total_stat()) is read by its totals. */
	for (pass = 0; !err && pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			char name[ETH_GSTRING_LEN + 1];

			memcpy(name, g->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
			name[ETH_GSTRING_LEN] = '\0';
			if (!xdptx_is_error_stat(name))
				continue;
			if (pass == 0)
				totals += xdptx_is_total_stat(name);
			else if (!totals || xdptx_is_total_stat(name))
				idx[nr++] = i;
		}
	}
	free(g);
	if (err) {
		free(idx);
		p->n_stats = 0;
		return err;
	}
	p->err_idx = idx;
	p->nr_err = nr;
	return 0;
}

/* One generic netlink request and its one answer, into @buf. Returns the
 * answer's length, or a negative errno (the kernel's, from NLMSG_ERROR). */
static int genl_call(int fd, __u16 type, __u8 cmd, __u16 attr, const void *val, __u16 len,
		     char *buf, size_t size)
{
	struct {
		struct nlmsghdr nh;
		struct genlmsghdr gh;
		char attrs[64];
	} req;
	struct nlattr *a = (struct nlattr *)req.attrs;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct nlmsghdr *nh;
	ssize_t n;

	if ((size_t)NLA_HDRLEN + len > sizeof(req.attrs))
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	a->nla_type = attr;
	a->nla_len = (__u16)(NLA_HDRLEN + len);
	memcpy((char *)a + NLA_HDRLEN, val, len);
	req.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + NLA_ALIGN(a->nla_len));
	req.nh.nlmsg_type = type;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.gh.cmd = cmd;
	req.gh.version = 1;
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	n = recv(fd, buf, size, 0);
	if (n < 0)
		return -errno;
	nh = (struct nlmsghdr *)buf;
	if (!NLMSG_OK(nh, (size_t)n))
		return -EBADMSG;
	if (nh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nh);

		return e->error ? e->error : -EBADMSG;
	}
	return (int)n;
}

/* The attribute @type of the answer in @buf (@n bytes), or NULL. */
static const struct nlattr *genl_attr(const char *buf, int n, __u16 type, __u16 min_len)
{
	const struct nlmsghdr *nh = (const struct nlmsghdr *)buf;
	const char *pos = (const char *)NLMSG_DATA(nh) + GENL_HDRLEN;
	const char *end = buf + (nh->nlmsg_len < (__u32)n ? nh->nlmsg_len : (__u32)n);

	while (pos + NLA_HDRLEN <= end) {
		const struct nlattr *a = (const struct nlattr *)pos;

		if (a->nla_len < NLA_HDRLEN || pos + a->nla_len > end)
			return NULL;
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a->nla_len >= NLA_HDRLEN + min_len ? a : NULL;
		pos += NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

/* The netdev family's id; the socket stays closed (-1) without it. */
static void genl_open(struct xdptx_probe *p)
{
	char buf[4096];
	const struct nlattr *a;
	int n;

	p->genl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (p->genl_fd < 0)
		return;
	n = genl_call(p->genl_fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME,
		      NETDEV_GENL_NAME, sizeof(NETDEV_GENL_NAME), buf, sizeof(buf));
	a = n > 0 ? genl_attr(buf, n, CTRL_ATTR_FAMILY_ID, sizeof(__u16)) : NULL;
	if (!a) {
		close(p->genl_fd);
		p->genl_fd = -1;
		return;
	}
	memcpy(&p->family, (const char *)a + NLA_HDRLEN, sizeof(p->family));
}

int probe_xdptx_open(struct xdptx_probe *p, const char *iface, int ifindex, bool native)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	__u32 n;
	int err;

	memset(p, 0, sizeof(*p));
	p->genl_fd = -1;
	p->ifindex = ifindex;
	snprintf(p->iface, sizeof(p->iface), "%s", iface);
	p->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		return -errno;
	/* A driver without ethtool (some virtual ones) has no counters. */
	if (!ethtool_ioctl(p, &di))
		snprintf(p->driver, sizeof(p->driver), "%s", di.driver);
	p->veth = native && !strcmp(p->driver, "veth");
	if ((err = stats_count(p, &n)) || (err = stats_names(p, n))) {
		if (err != -EOPNOTSUPP)
			return err;
	}
	/* SHEDD_TEST_NO_XDP_FEATURES: for tests only, the driver's features
	 * are not asked, as on a kernel before 6.3 (no netdev family): the
	 * error counters alone must then find a black hole. */
	if (p->veth && !getenv("SHEDD_TEST_NO_XDP_FEATURES"))
		genl_open(p);
	return 0;
}

int probe_xdptx_errors(struct xdptx_probe *p, __u64 *errors)
{
	struct ethtool_stats *st;
	__u32 n, i;
	int err;

	if ((err = stats_count(p, &n)))
		return err;
	if (n != p->n_stats && (err = stats_names(p, n)))
		return err;
	if (!p->nr_err)
		return 0;
	st = calloc(1, sizeof(*st) + stats_room(n) * sizeof(__u64));
	if (!st)
		return -ENOMEM;
	st->cmd = ETHTOOL_GSTATS;
	st->n_stats = n;
	err = ethtool_ioctl(p, st);
	if (!err && st->n_stats != n) {
		p->n_stats = 0; /* the names again, next time */
		err = -EAGAIN;
	}
	if (!err) {
		*errors = 0;
		for (i = 0; i < p->nr_err; i++)
			*errors += st->data[p->err_idx[i]];
	}
	free(st);
	return err ? err : 1;
}

int probe_xdptx_hint(struct xdptx_probe *p)
{
	char buf[4096];
	const struct nlattr *a;
	__u32 ifindex = (__u32)p->ifindex;
	__u64 features;
	int n;

	if (!p->veth || p->genl_fd < 0)
		return XDPTX_HINT_NONE;
	n = genl_call(p->genl_fd, p->family, NETDEV_GENL_CMD_DEV_GET, NETDEV_GENL_A_DEV_IFINDEX,
		      &ifindex, sizeof(ifindex), buf, sizeof(buf));
	a = n > 0 ? genl_attr(buf, n, NETDEV_GENL_A_DEV_XDP_FEATURES, sizeof(__u64)) : NULL;
	if (!a)
		return XDPTX_HINT_NONE;
	memcpy(&features, (const char *)a + NLA_HDRLEN, sizeof(features));
	return features & NETDEV_GENL_XDP_ACT_NDO_XMIT ? XDPTX_HINT_OK : XDPTX_HINT_BLOCKED;
}

void probe_xdptx_close(struct xdptx_probe *p)
{
	if (p->fd >= 0)
		close(p->fd);
	if (p->genl_fd >= 0)
		close(p->genl_fd);
	free(p->err_idx);
	p->fd = p->genl_fd = -1;
	p->err_idx = NULL;
	p->nr_err = 0;
}

int probe_xdp_rx_vlan(int ifindex)
{
	struct xdptx_probe p = { .genl_fd = -1 };
	const struct nlattr *a;
	__u32 idx = (__u32)ifindex;
	__u64 features;
	char buf[4096];
	int n;

	/* SHEDD_TEST_NO_XDP_FEATURES: as in probe_xdptx_open(), as on a
	 * kernel before 6.3. */
	if (getenv("SHEDD_TEST_NO_XDP_FEATURES"))
		return 0;
	genl_open(&p);
	if (p.genl_fd < 0)
		return 0;
	n = genl_call(p.genl_fd, p.family, NETDEV_GENL_CMD_DEV_GET, NETDEV_GENL_A_DEV_IFINDEX,
		      &idx, sizeof(idx), buf, sizeof(buf));
	close(p.genl_fd);
	if (n < 0)
		return n;
	a = genl_attr(buf, n, NETDEV_GENL_A_DEV_XDP_RX_METADATA_FEATURES, sizeof(__u64));
	if (!a)
		return 0;
	memcpy(&features, (const char *)a + NLA_HDRLEN, sizeof(features));
	return (features & NETDEV_GENL_XDP_RX_METADATA_VLAN_TAG) != 0;
}
