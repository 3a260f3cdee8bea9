#include "indexer/formats/xmp.h"

#include <expat.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/strbuf.h"
#include "indexer/formats/parsers.h"

/* Expat joins a name's namespace URI and local part with this byte. */
#define SEP '\x01'
#define NS_RDF "http://www.w3.org/1999/02/22-rdf-syntax-ns#\x01"
#define NS_XML "http://www.w3.org/XML/1998/namespace\x01"

/* The longest value kept; longer text is cut (with a warning) at a
 * character boundary. */
#define VALUE_MAX (32u * 1024u)

enum kind { K_TEXT, K_RATING, K_MICRO, K_MICRO_OFFSET, K_MOTION };

/* Google's camera and container namespaces (motion photos). */
#define NS_GCAMERA "http://ns.google.com/photos/1.0/camera/\x01"
#define NS_CONTAINER "http://ns.google.com/photos/1.0/container/\x01"
#define NS_ITEM "http://ns.google.com/photos/1.0/container/item/\x01"

static const struct prop {
	const char *name; /* namespace URI, SEP, local name */
	enum desc_field field;
	enum kind kind;
	int list;         /* every item counts (else: one value, Alt chosen) */
} props[] = {
	{"http://ns.adobe.com/xap/1.0/\x01Rating", DF_N, K_RATING, 0},
	{"http://ns.adobe.com/xap/1.0/\x01Label", DF_LABEL, K_TEXT, 0},
	{"http://purl.org/dc/elements/1.1/\x01title", DF_TITLE, K_TEXT, 0},
	{"http://purl.org/dc/elements/1.1/\x01" "description", DF_DESCRIPTION, K_TEXT, 0},
	{"http://purl.org/dc/elements/1.1/\x01rights", DF_COPYRIGHT, K_TEXT, 0},
	{"http://purl.org/dc/elements/1.1/\x01" "creator", DF_CREATOR, K_TEXT, 1},
	{"http://purl.org/dc/elements/1.1/\x01subject", DF_KEYWORD, K_TEXT, 1},
	{"http://ns.adobe.com/lightroom/1.0/\x01hierarchicalSubject", DF_HIER, K_TEXT, 1},
	{"http://www.digikam.org/ns/1.0/\x01TagsList", DF_HIER, K_TEXT, 1},
	{NS_GCAMERA "MicroVideo", DF_N, K_MICRO, 0},
	{NS_GCAMERA "MicroVideoOffset", DF_N, K_MICRO_OFFSET, 0},
	{NS_GCAMERA "MotionPhoto", DF_N, K_MOTION, 0},
};
#define DIGIKAM_TAGS 8 /* props[8]: '/' separates its levels */

struct px {
	XML_Parser xp;
	struct x_meta *m;
	enum desc_src src;
	int depth;        /* of the element being read (root = 1) */
	int rdf;          /* depth of rdf:RDF, 0 outside */
	int done;         /* the root element ended: what follows is padding */
	int rc;           /* SL_E_NOMEM once memory ran out */
	const char *stop; /* why we stopped the parser, NULL if we did not */
	/* the property being read (depth rdf + 2), or NULL */
	const struct prop *prop;
	int prop_depth;
	int item_depth;   /* an rdf:li being read, 0 if none */
	int is_default;   /* that li is xml:lang x-default */
	int cut;          /* a value was cut at VALUE_MAX: warned */
	struct strbuf text;   /* character data of the value being read */
	struct strbuf chosen; /* an Alt's pick so far */
	int have_chosen, chosen_default;
	/* a motion photo: GCamera:MicroVideo and its offset from the end
	 * (version 1 of Google's format), GCamera:MotionPhoto and the length
	 * of its container item of semantic MotionPhoto (the current one);
	 * -1 where absent */
	int micro, motion;
	int64_t micro_offset, item_length;
};

static void fail(struct px *x, const char *why)
{
	if (!x->stop)
		x->stop = why;
	XML_StopParser(x->xp, XML_FALSE);
}

static void nomem(struct px *x)
{
	x->rc = SL_E_NOMEM;
	fail(x, "out of memory");
}

static const struct prop *find_prop(const char *name)
{
	size_t i;
	for (i = 0; i < sizeof(props) / sizeof(props[0]); i++)
		if (strcmp(name, props[i].name) == 0)
			return &props[i];
	return NULL;
}

/* "3", "-1", "4.0": the rating as an integer, -1..5; else -2. */
static int parse_rating(const char *s)
{
	int neg = 0, v = 0, digits = 0;

	s += strspn(s, " \t\r\n");
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	while (*s >= '0' && *s <= '9' && digits < 4)
		v = v * 10 + (*s++ - '0'), digits++;
	if (*s == '.')
		for (s++; *s == '0'; s++)
			;
	s += strspn(s, " \t\r\n");
	if (!digits || *s)
		return -2;
	v = neg ? -v : v;
	return v >= -1 && v <= 5 ? v : -2;
}

/* A byte count: decimal digits, blanks around; else -1. */
static int64_t parse_count(const char *s)
{
	int64_t v = 0;
	int digits = 0;

	s += strspn(s, " \t\r\n");
	while (*s >= '0' && *s <= '9' && digits < 18)
		v = v * 10 + (*s++ - '0'), digits++;
	s += strspn(s, " \t\r\n");
	return digits && !*s ? v : -1;
}

/* One value of the current property is complete. */
static void emit(struct px *x, const struct prop *p, const char *s, size_t n)
{
	switch (p->kind) {
	case K_MICRO: x->micro = parse_count(s) > 0; return;
	case K_MOTION: x->motion = parse_count(s) > 0; return;
	case K_MICRO_OFFSET: x->micro_offset = parse_count(s); return;
	case K_RATING: {
		int r = parse_rating(s);
		if (r == -2)
			x_warn(x->m, "XMP: Rating '%.16s' is not -1..5", s);
		else if (desc_rating(x->m, x->src, r) != SL_OK)
			nomem(x);
		return;
	}
	default: break;
	}
	if (p == &props[DIGIKAM_TAGS]) {
		/* digiKam writes levels with '/', Lightroom with '|' */
		char *t = malloc(n + 1), *c;
		if (!t) {
			nomem(x);
			return;
		}
		memcpy(t, s, n);
		t[n] = '\0';
		for (c = t; (c = memchr(c, '/', (size_t)(t + n - c))) != NULL; c++)
			*c = '|';
		if (desc_add(x->m, p->field, x->src, t, n) != SL_OK)
			nomem(x);
		free(t);
		return;
	}
	if (desc_add(x->m, p->field, x->src, s, n) != SL_OK)
		nomem(x);
}

/* An attribute's value is bounded like an element's text (on_text). */
static void emit_attr(struct px *x, const struct prop *p, const char *v)
{
	size_t n = strlen(v);

	if (n > VALUE_MAX) {
		n = VALUE_MAX;
		while (n && ((unsigned char)v[n] & 0xc0) == 0x80) /* not in a character */
			n--;
		if (!x->cut)
			x_warn(x->m, "XMP: a value over %u KiB cut", VALUE_MAX / 1024);
		x->cut = 1;
	}
	emit(x, p, v, n);
}

static int is_rdf(const char *name, const char *local)
{
	size_t k = sizeof(NS_RDF) - 1;
	return strncmp(name, NS_RDF, k) == 0 && strcmp(name + k, local) == 0;
}

static const char *attr(const char **atts, const char *name)
{
	for (; atts[0]; atts += 2)
		if (strcmp(atts[0], name) == 0)
			return atts[1];
	return NULL;
}

static void on_start(void *ud, const char *name, const char **atts)
{
	struct px *x = ud;
	int d = ++x->depth;

	if (d > XMP_MAX_DEPTH) {
		fail(x, "elements nested too deep");
		return;
	}
	if (!x->rdf) {
		if (is_rdf(name, "RDF"))
			x->rdf = d;
		return;
	}
	if (d > x->rdf + 2 && strcmp(name, NS_CONTAINER "Item") == 0) {
		/* <Container:Item Item:Semantic="MotionPhoto" Item:Length="N"/>
		 * in Container:Directory's list: the movie appended */
		const char *sem = attr(atts, NS_ITEM "Semantic"), *len = attr(atts, NS_ITEM "Length");
		if (sem && strcmp(sem, "MotionPhoto") == 0 && len && x->item_length < 0)
			x->item_length = parse_count(len);
		return;
	}
	if (d == x->rdf + 1) {
		/* a top-level rdf:Description: simple properties as attributes */
		const char **a;
		if (!is_rdf(name, "Description"))
			return;
		for (a = atts; a[0]; a += 2) {
			const struct prop *p = find_prop(a[0]);
			if (p)
				emit_attr(x, p, a[1]);
		}
		return;
	}
	if (d == x->rdf + 2) {
		const char *v;
		x->prop = find_prop(name);
		x->prop_depth = d;
		x->have_chosen = x->chosen_default = 0;
		sb_reset(&x->text);
		sb_reset(&x->chosen);
		/* <dc:title rdf:value="..."/> is rare, but legal */
		if (x->prop && (v = attr(atts, NS_RDF "value")) != NULL) {
			emit_attr(x, x->prop, v);
			x->prop = NULL;
		}
		return;
	}
	if (x->prop && d == x->prop_depth + 2 && is_rdf(name, "li")) {
		const char *lang = attr(atts, NS_XML "lang");
		x->item_depth = d;
		x->is_default = lang && strcasecmp(lang, "x-default") == 0;
		sb_reset(&x->text);
	}
}

static void on_end(void *ud, const char *name)
{
	struct px *x = ud;
	int d = x->depth--;

	(void)name;
	if (d == 1)
		x->done = 1;
	if (d == x->rdf) {
		x->rdf = 0;
		return;
	}
	if (!x->prop)
		return;
	if (x->item_depth && d == x->item_depth) {
		x->item_depth = 0;
		if (x->prop->list) {
			emit(x, x->prop, x->text.p ? x->text.p : "", x->text.len);
		} else if (!x->have_chosen || (x->is_default && !x->chosen_default)) {
			/* Alt: x-default wins, else the first item */
			sb_reset(&x->chosen);
			if (x->text.len)
				sb_add(&x->chosen, x->text.p, x->text.len);
			if (x->chosen.oom)
				nomem(x);
			x->have_chosen = 1;
			x->chosen_default = x->is_default;
		}
		sb_reset(&x->text);
		return;
	}
	if (d == x->prop_depth) {
		if (x->have_chosen)
			emit(x, x->prop, x->chosen.p ? x->chosen.p : "", x->chosen.len);
		else if (x->text.len) /* a simple value: <dc:subject>a, b</dc:subject> */
			emit(x, x->prop, x->text.p, x->text.len);
		x->prop = NULL;
		sb_reset(&x->text);
	}
}

static void on_text(void *ud, const char *s, int len)
{
	struct px *x = ud;
	size_t n = (size_t)len;

	/* only the text directly inside the item or the simple property */
	if (!x->prop || (x->item_depth ? x->depth != x->item_depth : x->depth != x->prop_depth))
		return;
	if (x->text.len + n > VALUE_MAX) {
		n = VALUE_MAX - x->text.len;
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80) /* not in a character */
			n--;
		if (!x->cut)
			x_warn(x->m, "XMP: a value over %u KiB cut", VALUE_MAX / 1024);
		x->cut = 1;
	}
	if (sb_add(&x->text, s, n))
		nomem(x);
}

static void on_doctype(void *ud, const char *name, const char *sysid, const char *pubid,
		       int has_internal)
{
	(void)name, (void)sysid, (void)pubid, (void)has_internal;
	fail(ud, "a DOCTYPE (entity declarations are refused)");
}

static void on_entity(void *ud, const char *name, int pe, const char *value, int len,
		      const char *base, const char *sysid, const char *pubid, const char *notation)
{
	(void)name, (void)pe, (void)value, (void)len, (void)base, (void)sysid, (void)pubid;
	(void)notation;
	fail(ud, "an entity declaration");
}

/* The packet wrapper's head, <?xpacket begin="..." ...?>, is skipped: its
 * begin attribute should hold a byte order mark, and some writers put a
 * control character there, which XML refuses (exiftool does not).  Only a
 * UTF-8 packet can start with it in ASCII; UTF-16 ones go to expat whole. */
static void skip_wrapper(const uint8_t **p, size_t *n)
{
	static const char head[] = "<?xpacket";
	size_t i = 0;

	if (*n >= 3 && memcmp(*p, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < *n && ((*p)[i] == ' ' || (*p)[i] == '\t' || (*p)[i] == '\r' || (*p)[i] == '\n'))
		i++;
	if (*n - i < sizeof(head) || memcmp(*p + i, head, sizeof(head) - 1) != 0)
		return;
	for (i += sizeof(head) - 1; i + 1 < *n; i++)
		if ((*p)[i] == '?' && (*p)[i + 1] == '>') {
			*p += i + 2;
			*n -= i + 2;
			return;
		}
}

int xmp_parse(const uint8_t *p, size_t n, struct x_meta *m, enum desc_src src)
{
	struct px x;
	enum XML_Status st;
	int rc;

	memset(&x, 0, sizeof(x));
	x.m = m;
	x.src = src;
	x.text = (struct strbuf)STRBUF_INIT;
	x.chosen = (struct strbuf)STRBUF_INIT;
	x.micro = x.motion = -1;
	x.micro_offset = x.item_length = -1;
	/* expat takes an int length */
	if (n > (size_t)64 << 20) {
		x_warn(m, "XMP: a packet of %zu bytes ignored", n);
		return SL_OK;
	}
	x.xp = XML_ParserCreateNS(NULL, SEP);
	if (!x.xp) {
		m->desc_oom = 1;
		return SL_E_NOMEM;
	}
	XML_SetUserData(x.xp, &x);
	XML_SetElementHandler(x.xp, on_start, on_end);
	XML_SetCharacterDataHandler(x.xp, on_text);
	XML_SetStartDoctypeDeclHandler(x.xp, on_doctype);
	XML_SetEntityDeclHandler(x.xp, on_entity);
	XML_SetParamEntityParsing(x.xp, XML_PARAM_ENTITY_PARSING_NEVER);
	skip_wrapper(&p, &n);
	st = XML_Parse(x.xp, (const char *)p, (int)n, XML_TRUE);
	if (x.rc == SL_OK && st == XML_STATUS_ERROR) {
		enum XML_Error e = XML_GetErrorCode(x.xp);
		if (e == XML_ERROR_NO_MEMORY)
			x.rc = SL_E_NOMEM, m->desc_oom = 1;
		else if (x.done && !x.stop)
			; /* padding after the packet (NULs, junk) */
		else if (x.stop)
			x_warn(m, "XMP: %s", x.stop);
		else
			x_warn(m, "XMP: %s at line %lu", XML_ErrorString(e),
			       (unsigned long)XML_GetCurrentLineNumber(x.xp));
	}
	/* a motion photo's movie, as its own packet says (a sidecar's would
	 * describe another file): each length counts only under its own flag
	 * set to 1, and the current format (Container) wins over the first */
	if (src != DS_SIDECAR && !(m->have & XM_EMBEDDED)) {
		int64_t len = x.motion > 0 && x.item_length > 0  ? x.item_length
			      : x.micro > 0 && x.micro_offset > 0 ? x.micro_offset
								  : -1;
		if (len > 0) {
			m->embedded_video = (uint64_t)len;
			m->have |= XM_EMBEDDED;
		}
	}
	rc = x.rc;
	XML_ParserFree(x.xp);
	sb_free(&x.text);
	sb_free(&x.chosen);
	return rc;
}

/* An XMP file: a sidecar's values, which win over the image's own
 * (desc.h).  A file streamed past its first chunk (sidecars are small) is
 * read as far as that chunk goes, with the parser's warning. */
int xmp_file_parse(const uint8_t *p, size_t n, struct x_meta *m, struct sl_err *err)
{
	(void)err;
	if (xmp_parse(p, n, m, DS_SIDECAR) == SL_E_NOMEM)
		m->desc_oom = 1;
	return SL_OK;
}
