// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fair_view.c - per-source fairness as shedctl and the metrics show it
 * (fair_view.h). */
#include <string.h>

#include "fair_sketch.h"
#include "fair_view.h"

void fair_view_build(struct fair_view *v, const struct shedd_fair_class *cfg,
		     const struct shedd_fair_stats *percpu, int ncpus,
		     const struct shedd_fair_heavy *heavy, __u64 now)
{
	__u32 c;
	int i;

	memset(v, 0, sizeof(*v));
	v->have = true;
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		struct fair_view_class *vc = &v->cls[c];

		vc->cfg = cfg[c];
		for (i = 0; i < ncpus; i++) {
			const struct shedd_fair_stats *s = &percpu[(size_t)c * (size_t)ncpus + (size_t)i];

			vc->stats.counted += s->counted;
			vc->stats.checked += s->checked;
			vc->stats.shed += s->shed;
			vc->stats.over += s->over;
		}
		vc->ntop = fair_top(&heavy[c * FAIR_HEAVY_SLOTS], c, now, vc->top, FAIR_TOP_MAX);
	}
}

bool fair_view_level_used(const struct shedd_fair_class *cfg, __u32 level)
{
	__u32 m = fair_level_mask(cfg->levels, 4) | fair_level_mask(cfg->levels, 6);

	return level < FAIR_LEVELS && (m & (1U << level));
}

const char *fair_view_level_label(__u32 level)
{
	static const char *const names[FAIR_LEVELS] = { "addr", "24+64", "48" };

	return level < FAIR_LEVELS ? names[level] : "?";
}

const char *fair_view_hitter_level(const struct fair_hitter *h)
{
	const char *n = fair_level_name(h->family, h->level);

	return n[0] == '/' ? n + 1 : n;
}

double fair_view_limit_per_sec(__u32 limit)
{
	return (double)limit / FAIR_WINDOW_S;
}

void fair_view_json(FILE *f, const struct fair_view_class *c)
{
	char levels[32], src[64];
	__u32 l;
	int i, n = 0;

	fair_format_levels(c->cfg.levels, levels, sizeof(levels));
	fprintf(f, "{\"enabled\":%s,\"levels\":\"%s\",\"active\":%s,\"per_level\":[",
		c->cfg.levels ? "true" : "false", levels, c->cfg.active ? "true" : "false");
	for (l = 0; l < FAIR_LEVELS; l++) {
		if (!fair_view_level_used(&c->cfg, l))
			continue;
		fprintf(f, "%s{\"level\":\"%s\",\"sources\":%u,\"limit_per_sec\":", n++ ? "," : "",
			fair_view_level_label(l), c->cfg.sources[l]);
		if (c->cfg.limit[l])
			fprintf(f, "%.3f}", fair_view_limit_per_sec(c->cfg.limit[l]));
		else
			fprintf(f, "null}");
	}
	fprintf(f, "],\"shed\":%llu,\"counted\":%llu,\"top\":[",
		(unsigned long long)c->stats.shed, (unsigned long long)c->stats.counted);
	for (i = 0; i < c->ntop; i++) {
		const struct fair_hitter *h = &c->top[i];
		__u32 lim = h->level < FAIR_LEVELS ? c->cfg.limit[h->level] : 0;

		fair_hitter_source(h, src, sizeof(src));
		fprintf(f, "%s{\"source\":\"%s\",\"family\":%d,\"level\":\"%s\",\"rate_per_sec\":%.3f,"
			"\"limit_per_sec\":", i ? "," : "", src, h->family, fair_view_hitter_level(h),
			h->rate_per_sec);
		if (lim)
			fprintf(f, "%.3f", fair_view_limit_per_sec(lim));
		else
			fprintf(f, "null");
		fprintf(f, ",\"shed\":%llu,\"age_s\":%.3f}", (unsigned long long)h->shed,
			(double)h->age_ns / 1e9);
	}
	fprintf(f, "]}");
}
