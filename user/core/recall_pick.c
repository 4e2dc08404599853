// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* recall_pick.c - see recall_pick.h. */
#include <stdlib.h>

#include "recall_pick.h"

bool recall_idle(const struct recall_seen *s)
{
	return !s->rqueue && !s->wqueue && !s->unacked && s->bytes_received &&
	       s->bytes_acked && /* an answer went out and arrived */
	       s->last_data_sent_ms <= s->last_data_recv_ms &&
	       s->last_data_sent_ms >= RECALL_IDLE_MS;
}

static int cmp(const void *a, const void *b)
{
	const struct recall_cand *x = a, *y = b;

	if (x->cls != y->cls)
		return x->cls > y->cls ? -1 : 1; /* the lowest class first */
	if (x->opened_ns != y->opened_ns)
		return x->opened_ns > y->opened_ns ? -1 : 1; /* the youngest first */
	return 0;
}

int recall_pick(struct recall_cand *c, int n, const double want[SHEDD_NR_CLASSES], int budget)
{
	int taken[SHEDD_NR_CLASSES] = { 0 };
	int i, k = 0;

	if (n <= 0 || budget <= 0)
		return 0;
	qsort(c, (size_t)n, sizeof(*c), cmp);
	for (i = 0; i < n && k < budget; i++) {
		__u32 cls = c[i].cls < SHEDD_NR_CLASSES ? c[i].cls : SHEDD_NR_CLASSES - 1;

		if ((double)(taken[cls] + 1) > want[cls])
			continue;
		taken[cls]++;
		/* Keep the picked ones in front, in order. */
		if (i != k) {
			struct recall_cand t = c[k];

			c[k] = c[i];
			c[i] = t;
		}
		k++;
	}
	return k;
}
