/*
 * t/unit/matrix: the matrix's table (lib/ff_matrix.c) as lines, for
 * t/unit.bats to hold against README's tables. Built by `make`, never
 * installed.
 *
 *   workload NAME PROTOCOLS SERVER CLIENT   (PROTOCOLS "tcp,http2"; own: SERVER is "own")
 *   relay NAME PROTOCOL yes|no WHY          (ff_carries without a workload)
 *   carries WORKLOAD RELAY PROTOCOL yes|no WHY
 *   others RELAY LIST                       (ff_other_relays)
 */
#include "ff.h"

#include <stdio.h>

static void
protocols(int bits)
{
	int p, n = 0;

	for (p = 0; ff_protocols[p]; p++)
		if (bits & ff_protocol_bit(ff_protocols[p]))
			printf("%s%s", n++ ? "," : "", ff_protocols[p]);
}

int
main(int argc, char *argv[])
{
	struct ff_buf why = FF_BUF_INIT;
	int w, r, p, yes;

	(void)argc;
	ff_setprog(argv[0]);
	for (w = 0; ff_workloads[w]; w++) {
		const struct ff_workload *row = ff_workload_find(ff_workloads[w]);

		printf("workload %s ", row->name);
		protocols(row->protocols);
		printf(" %s %s\n", row->own ? "own" : ff_workload_server_program(row->name),
		       row->own ? "own" : ff_workload_client_program(row->name));
	}
	for (r = 0; ff_relays[r]; r++) {
		for (p = 0; ff_protocols[p]; p++) {
			why.len = 0;
			yes = ff_carries(NULL, ff_relays[r], ff_protocols[p], NULL, NULL, &why);
			printf("relay %s %s %s %s\n", ff_relays[r], ff_protocols[p], yes ? "yes" : "no", why.len ? why.s : "");
		}
		printf("others %s %s\n", ff_relays[r], ff_other_relays(ff_relays[r]));
	}
	for (w = 0; ff_workloads[w]; w++)
		for (r = 0; ff_relays[r]; r++)
			for (p = 0; ff_protocols[p]; p++) {
				why.len = 0;
				yes = ff_carries(ff_workloads[w], ff_relays[r], ff_protocols[p],
						 NULL, NULL, &why);
				printf("carries %s %s %s %s %s\n", ff_workloads[w], ff_relays[r],
				       ff_protocols[p], yes ? "yes" : "no", why.len ? why.s : "");
			}
	ff_buf_free(&why);
	return 0;
}
