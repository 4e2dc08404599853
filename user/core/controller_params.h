/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* controller_params.h - the options (the command line over the config
 * file) as the controller's parameters: what start and SIGHUP apply.
 */
#ifndef SHEDD_CONTROLLER_PARAMS_H
#define SHEDD_CONTROLLER_PARAMS_H

#include "aimd.h"
#include "options.h"

/* The controller's parameters from the options (aimd_defaults() for what
 * they leave at 0). */
void controller_params(const struct shedd_options *o, struct aimd_params *p);

#endif /* SHEDD_CONTROLLER_PARAMS_H */
