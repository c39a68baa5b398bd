/*
 * ff-topology's drivers, by the relay's name, and what they share to
 * write a relay's configuration from its templates in relay-conf/.
 */
#include "ff-topology.h"

#include <stdio.h>
#include <string.h>

/* One driver per relay of the matrix; a relay is its row there, this line, and its file. */
static const struct relay_driver *const drivers[] = {
	&relay_skrouterd, &relay_nghttpx, &relay_nginx, &relay_haproxy, &relay_cmd, &relay_none,
};

const struct relay_driver *
driver_find(const char *name)
{
	size_t i;

	for (i = 0; i < FF_ARRAY_SIZE(drivers); i++)
		if (!strcmp(drivers[i]->name, name))
			return drivers[i];
	ff_die("relay '%s' has no driver in ff-topology to configure and start it", name);
}

const char *
port_str(char buf[16], int port)
{
	snprintf(buf, 16, "%d", port);
	return buf;
}

/* A template of relay-conf filled, added to `text`. */
void
conf_part(struct ff_buf *text, const char *tmpl_name, enum ff_conf_syntax syntax,
	  const char *const vars[])
{
	char *tmpl = ff_datapath(tmpl_name), *part;

	if (!tmpl)
		ff_die("cannot find '%s'", tmpl_name);
	part = ff_template_fill(tmpl, syntax, vars);
	free(tmpl);
	if (!part)
		exit(1);
	ff_buf_addstr(text, part);
	free(part);
}

void
write_conf(struct relay *r, const char *tmpl_name, enum ff_conf_syntax syntax,
	   const char *const vars[])
{
	struct ff_buf text = FF_BUF_INIT;

	conf_part(&text, tmpl_name, syntax, vars);
	if (ff_write_file(r->conf, text.s, 0600) < 0)
		exit(1);
	ff_buf_free(&text);
}
