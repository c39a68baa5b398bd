/*
 * ff_tls.c - the certificates of a --tls run: a CA of the run's own, and a
 * certificate and key for each relay, made by the openssl command into the
 * run directory; and where each file is.
 */
#include "ff.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

char *
ff_tls_file(const char *rundir, const char *name)
{
	return ff_asprintf("%s/tls/%s", rundir, name);
}

/*
 * Run openssl with `args` (NULL-terminated, after the program); 0, or -1
 * with what it said in `why`. No configuration file of the machine's is
 * read (-config /dev/null where it takes one): the run's certificates are
 * what the arguments say.
 */
#define OPENSSL_SECONDS 60

static int
openssl(char *const args[], struct ff_buf *why)
{
	struct ff_argv a = FF_ARGV_INIT;
	char *out, *nl;
	int status, i;

	ff_argv_add(&a, "openssl");
	for (i = 0; args[i]; i++)
		ff_argv_add(&a, args[i]);
	/* Making keys on a busy machine can take seconds: a bound for a hang, not for a probe. */
	out = ff_run_within(a.v, &status, OPENSSL_SECONDS);
	if (!out)
		ff_why(why, "cannot run openssl");
	else if (status != 0) {
		/* Its last line that says something: the reason. */
		while ((nl = strrchr(out, '\n')) && !nl[1])
			*nl = 0;
		nl = strrchr(out, '\n');
		ff_why(why, "'openssl %s' %s: %s", args[0],
		       status == -1 ? "did not finish within " FF_STR(OPENSSL_SECONDS) " s" : ff_status_how(status),
		       nl ? nl + 1 : out);
	}
	ff_argv_free(&a);
	free(out);
	return out && status == 0 ? 0 : -1;
}

/* A role's key and certificate, signed by the CA of `dir`. */
static int
make_relay(const char *dir, const char *role, int serial, struct ff_buf *why)
{
	char *key = ff_asprintf("%s/%s.key", dir, role), *crt = ff_asprintf("%s/%s.crt", dir, role);
	char *csr = ff_asprintf("%s/%s.csr", dir, role), *ca = ff_asprintf("%s/ca.crt", dir);
	char *cakey = ff_asprintf("%s/ca.key", dir), *subj = ff_asprintf("/CN=flimflam-%s", role);
	char *san = ff_asprintf("subjectAltName=DNS:flimflam-%s,IP:127.0.0.1", role);
	char ser[16];
	int r;

	snprintf(ser, sizeof(ser), "%d", serial);
	{
		char *req[] = { "req", "-new", "-newkey", "ec", "-pkeyopt",
				"ec_paramgen_curve:prime256v1", "-noenc", "-keyout", key,
				"-out", csr, "-subj", subj, "-config", "/dev/null",
				"-addext", san, "-addext",
				"extendedKeyUsage=serverAuth,clientAuth", NULL };
		char *sign[] = { "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", cakey,
				 "-set_serial", ser, "-days", "7", "-copy_extensions", "copyall",
				 "-out", crt, NULL };

		r = openssl(req, why) < 0 || openssl(sign, why) < 0 ? -1 : 0;
	}
	unlink(csr);
	if (r == 0 && chmod(key, 0600) < 0) {
		ff_why(why, "cannot chmod '%s': %s", key, strerror(errno));
		r = -1;
	}
	free(key);
	free(crt);
	free(csr);
	free(ca);
	free(cakey);
	free(subj);
	free(san);
	return r;
}

/*
 * FLIMFLAM_TLS_CERTS: the files are copied from there, not made (tests
 * give a set that does not verify).
 */
static int
copy_given(const char *from, const char *dir, const char *const roles[], int nroles,
	   struct ff_buf *why)
{
	int i, r = 0;

	for (i = -1; i < nroles && r == 0; i++) {
		const char *names[2] = { "crt", "key" };
		int k;

		for (k = 0; k < (i < 0 ? 1 : 2) && r == 0; k++) {
			char *src = ff_asprintf("%s/%s.%s", from, i < 0 ? "ca" : roles[i], names[k]);
			char *dst = ff_asprintf("%s/%s.%s", dir, i < 0 ? "ca" : roles[i], names[k]);
			char *text = ff_read_file(src, NULL);

			if (!text) {
				ff_why(why, "FLIMFLAM_TLS_CERTS: cannot read '%s': %s", src,
				       strerror(errno));
				r = -1;
			} else if (ff_write_file(dst, text, 0600) < 0) {
				ff_why(why, "cannot write '%s'", dst);
				r = -1;
			}
			free(text);
			free(src);
			free(dst);
		}
	}
	return r;
}

int
ff_tls_certs(const char *rundir, const char *const roles[], int nroles, struct ff_buf *why)
{
	char *dir = ff_asprintf("%s/tls", rundir), *key = ff_asprintf("%s/ca.key", dir);
	char *crt = ff_asprintf("%s/ca.crt", dir), *subj;
	const char *given = getenv("FLIMFLAM_TLS_CERTS");
	int i, r = 0;

	/* The run's own: made afresh each attempt, never readable by others. */
	if (ff_mkdirs(dir, 0700) < 0 || chmod(dir, 0700) < 0) {
		ff_why(why, "cannot create '%s': %s", dir, strerror(errno));
		r = -1;
	} else if (given && *given)
		r = copy_given(given, dir, roles, nroles, why);
	else {
		char *ca[] = { "req", "-x509", "-new", "-newkey", "ec", "-pkeyopt",
			       "ec_paramgen_curve:prime256v1", "-noenc", "-keyout", key,
			       "-out", crt, "-days", "7", "-subj", NULL, "-config", "/dev/null",
			       "-addext", "basicConstraints=critical,CA:TRUE",
			       "-addext", "keyUsage=critical,keyCertSign,cRLSign", NULL };

		/* Each run's CA has a name of its own: a relay trusts this run's. */
		subj = ff_asprintf("/CN=flimflam-ca-%d-%lld", (int)getpid(), (long long)time(NULL));
		ca[15] = subj;
		r = openssl(ca, why);
		free(subj);
		if (r == 0 && chmod(key, 0600) < 0) {
			ff_why(why, "cannot chmod '%s': %s", key, strerror(errno));
			r = -1;
		}
		for (i = 0; r == 0 && i < nroles; i++)
			r = make_relay(dir, roles[i], i + 1, why);
	}
	free(dir);
	free(key);
	free(crt);
	return r;
}
