/* What people wrote about a picture (desc.h), and the two parsers that
 * find it: XMP (xmp.h, expat) and IPTC IIM (iptc.h).  Packets and
 * datasets are built here byte by byte; test_media.py compares real and
 * exiftool-written files with exiftool, and the fuzz targets xmp and iptc
 * run both parsers on any input. */
#include "indexer/formats/desc.h"
#include "indexer/formats/iptc.h"
#include "indexer/formats/xmp.h"
#include "tests/unit/test.h"

#define NS_X "xmlns:x='adobe:ns:meta/'"
#define NS_RDF "xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'"
#define NS_DC "xmlns:dc='http://purl.org/dc/elements/1.1/'"
#define NS_XMP "xmlns:xmp='http://ns.adobe.com/xap/1.0/'"
#define NS_LR "xmlns:lr='http://ns.adobe.com/lightroom/1.0/'"
#define NS_DK "xmlns:digiKam='http://www.digikam.org/ns/1.0/'"
#define HEAD "<x:xmpmeta " NS_X "><rdf:RDF " NS_RDF ">"
#define TAIL "</rdf:RDF></x:xmpmeta>"

static struct x_meta m;

static void reset(void)
{
	x_meta_release(&m);
	memset(&m, 0, sizeof(m));
}

static int xmp(const char *s)
{
	reset();
	return xmp_parse((const uint8_t *)s, strlen(s), &m, DS_XMP);
}

/* The record's values of f joined by '#', "" when none. */
static const char *list(enum desc_field f)
{
	static char out[4096];
	const char *v[64];
	size_t n = desc_list(&m, f, v, 64), i;

	out[0] = '\0';
	for (i = 0; i < n && i < 64; i++) {
		if (i)
			strcat(out, "#");
		strncat(out, v[i], sizeof(out) - strlen(out) - 2);
	}
	return out;
}

static int rating(void)
{
	int r;
	return desc_get_rating(&m, &r) ? r : -99;
}

static void test_xmp_attributes(void)
{
	CHECK_INT(xmp(HEAD "<rdf:Description rdf:about='' " NS_XMP " " NS_DC
		      " xmp:Rating='3' xmp:Label='Green' dc:format='image/jpeg'/>" TAIL), SL_OK);
	CHECK_INT(rating(), 3);
	CHECK_STR(list(DF_LABEL), "Green");
	CHECK_STR(list(DF_TITLE), "");
	CHECK_STR(m.warnings, "");
}

#define NS_GC "xmlns:GCamera='http://ns.google.com/photos/1.0/camera/'"
#define NS_CT "xmlns:Container='http://ns.google.com/photos/1.0/container/'" \
	      " xmlns:Item='http://ns.google.com/photos/1.0/container/item/'"
#define DIRECTORY(len)                                                                   \
	"<Container:Directory><rdf:Seq><rdf:li rdf:parseType='Resource'>"                 \
	"<Container:Item Item:Mime='image/jpeg' Item:Semantic='Primary' Item:Length='0'/>" \
	"</rdf:li><rdf:li rdf:parseType='Resource'><Container:Item Item:Mime='video/mp4'"   \
	" Item:Semantic='MotionPhoto' Item:Length='" len "'/></rdf:li></rdf:Seq>"          \
	"</Container:Directory>"

/* A motion photo's movie: Google's two formats, as attributes or
 * elements; a flag of 0, or none, says there is no movie. */
static void test_xmp_motion(void)
{
	static const struct {
		const char *xmp;
		uint64_t want; /* 0: none */
	} cases[] = {
		{HEAD "<rdf:Description " NS_GC " GCamera:MicroVideo='1'"
		      " GCamera:MicroVideoOffset='4242'/>" TAIL, 4242},
		{HEAD "<rdf:Description " NS_GC "><GCamera:MicroVideo>1</GCamera:MicroVideo>"
		      "<GCamera:MicroVideoOffset> 99 </GCamera:MicroVideoOffset></rdf:Description>"
		      TAIL, 99},
		{HEAD "<rdf:Description " NS_GC " GCamera:MicroVideo='0'"
		      " GCamera:MicroVideoOffset='4242'/>" TAIL, 0},
		{HEAD "<rdf:Description " NS_GC " GCamera:MicroVideoOffset='4242'/>" TAIL, 0},
		{HEAD "<rdf:Description " NS_GC " " NS_CT " GCamera:MotionPhoto='1'>"
		      DIRECTORY("123456") "</rdf:Description>" TAIL, 123456},
		{HEAD "<rdf:Description " NS_GC " " NS_CT " GCamera:MotionPhoto='0'>"
		      DIRECTORY("123456") "</rdf:Description>" TAIL, 0},
		{HEAD "<rdf:Description " NS_GC " " NS_CT " GCamera:MotionPhoto='1'>"
		      DIRECTORY("12x") "</rdf:Description>" TAIL, 0},
		/* both: the current format's item wins */
		{HEAD "<rdf:Description " NS_GC " " NS_CT " GCamera:MotionPhoto='1'"
		      " GCamera:MicroVideo='1' GCamera:MicroVideoOffset='7'>" DIRECTORY("8")
		      "</rdf:Description>" TAIL, 8},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(xmp(cases[i].xmp), SL_OK);
		CHECK_INT((m.have & XM_EMBEDDED) != 0, cases[i].want != 0);
		CHECK_INT((long long)m.embedded_video, (long long)cases[i].want);
	}
	/* a sidecar describes another file: no movie of its own */
	reset();
	CHECK_INT(xmp_parse((const uint8_t *)cases[0].xmp, strlen(cases[0].xmp), &m, DS_SIDECAR),
		  SL_OK);
	CHECK_INT(m.have & XM_EMBEDDED, 0);
}

static void test_xmp_elements(void)
{
	CHECK_INT(xmp("<?xpacket begin='\xef\xbb\xbf' id='W5M0MpCehiHzreSzNTczkc9d'?>" HEAD
		      "<rdf:Description rdf:about='' " NS_DC " " NS_LR " " NS_DK " " NS_XMP ">"
		      "<xmp:Rating>-1</xmp:Rating>"
		      "<dc:title><rdf:Alt><rdf:li xml:lang='de'>Hafen</rdf:li>"
		      "<rdf:li xml:lang='x-default'>Harbour</rdf:li></rdf:Alt></dc:title>"
		      "<dc:description><rdf:Alt><rdf:li xml:lang='fr'>Le port</rdf:li>"
		      "<rdf:li xml:lang='en'>The port</rdf:li></rdf:Alt></dc:description>"
		      "<dc:creator><rdf:Seq><rdf:li>Ann</rdf:li><rdf:li>Bob &amp; Co</rdf:li>"
		      "</rdf:Seq></dc:creator>"
		      "<dc:subject><rdf:Bag><rdf:li>sea</rdf:li><rdf:li> boats </rdf:li>"
		      "<rdf:li>sea</rdf:li><rdf:li></rdf:li></rdf:Bag></dc:subject>"
		      "<lr:hierarchicalSubject><rdf:Bag><rdf:li>Places|Harbour</rdf:li>"
		      "</rdf:Bag></lr:hierarchicalSubject>"
		      "<digiKam:TagsList><rdf:Seq><rdf:li>People/Ann</rdf:li></rdf:Seq>"
		      "</digiKam:TagsList>"
		      "<dc:rights>&#169; Ann</dc:rights>"
		      "</rdf:Description>" TAIL "<?xpacket end='w'?>"), SL_OK);
	CHECK_INT(rating(), -1);
	CHECK_STR(list(DF_TITLE), "Harbour");          /* x-default, though second */
	CHECK_STR(list(DF_DESCRIPTION), "Le port");    /* no x-default: the first */
	CHECK_STR(list(DF_CREATOR), "Ann#Bob & Co");
	CHECK_STR(list(DF_KEYWORD), "sea#boats");      /* trimmed, once, no empty */
	CHECK_STR(list(DF_HIER), "Places|Harbour#People|Ann");
	CHECK_STR(list(DF_COPYRIGHT), "\xc2\xa9 Ann");
	CHECK_STR(m.warnings, "");
}

/* Namespaces are told by URI: any prefix, a default namespace, and a
 * familiar prefix bound to another URI. */
static void test_xmp_namespaces(void)
{
	CHECK_INT(xmp(HEAD "<rdf:Description rdf:about=''"
		      " xmlns:q='http://purl.org/dc/elements/1.1/'"
		      " xmlns:dc='http://example.com/not-dc/'>"
		      "<q:title>Real</q:title><dc:description>Not this</dc:description>"
		      "<Rating xmlns='http://ns.adobe.com/xap/1.0/'>5</Rating>"
		      "</rdf:Description>" TAIL), SL_OK);
	CHECK_STR(list(DF_TITLE), "Real");
	CHECK_STR(list(DF_DESCRIPTION), "");
	CHECK_INT(rating(), 5);
	/* rdf:value, and a plain text where a Bag belongs counts as one item */
	CHECK_INT(xmp(HEAD "<rdf:Description " NS_DC "><dc:title rdf:value='V'/>"
		      "<dc:subject>a, b</dc:subject></rdf:Description>" TAIL), SL_OK);
	CHECK_STR(list(DF_TITLE), "V");
	CHECK_STR(list(DF_KEYWORD), "a, b");
	/* properties of nested resources are not the picture's */
	CHECK_INT(xmp(HEAD "<rdf:Description " NS_DC " " NS_XMP ">"
		      "<xmp:Other rdf:parseType='Resource'><dc:title>inner</dc:title>"
		      "</xmp:Other></rdf:Description>" TAIL), SL_OK);
	CHECK_STR(list(DF_TITLE), "");
}

static void test_xmp_ratings(void)
{
	static const struct {
		const char *v;
		int want;
	} t[] = {{"0", 0}, {"5", 5}, {"4.0", 4}, {" 2 ", 2}, {"+1", 1},
		 {"6", -99}, {"-2", -99}, {"2.5", -99}, {"x", -99}, {"", -99}};
	size_t i;
	char buf[512];

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(buf, sizeof(buf), HEAD "<rdf:Description " NS_XMP " xmp:Rating='%s'/>" TAIL,
			 t[i].v);
		CHECK_INT(xmp(buf), SL_OK);
		CHECK_INT(rating(), t[i].want);
		CHECK_INT(t[i].want == -99, strstr(m.warnings, "Rating") != NULL);
	}
}

/* UTF-16, with its byte order mark, as some writers store a packet. */
static void test_xmp_utf16(void)
{
	const char *s = HEAD "<rdf:Description " NS_DC "><dc:title>Caf\xc3\xa9</dc:title>"
			     "</rdf:Description>" TAIL;
	uint8_t *u = malloc(2 * strlen(s) + 2);
	size_t n = 0, i;
	int big;

	for (big = 0; big < 2; big++) {
		n = 0;
		u[n++] = big ? 0xFE : 0xFF, u[n++] = big ? 0xFF : 0xFE;
		for (i = 0; s[i]; i++) {
			unsigned c = (unsigned char)s[i];
			if (c == 0xc3) /* the one non-ASCII character: U+00E9 */
				c = 0xe9, i++;
			u[n++] = (uint8_t)(big ? 0 : c), u[n++] = (uint8_t)(big ? c : 0);
		}
		reset();
		CHECK_INT(xmp_parse(u, n, &m, DS_XMP), SL_OK);
		CHECK_STR(list(DF_TITLE), "Caf\xc3\xa9");
	}
	free(u);
}

/* Hostile packets: entities, depth, size, damage. */
static void test_xmp_hostile(void)
{
	char *big;
	size_t i, n;

	/* the billion laughs never expand: the DOCTYPE is refused */
	CHECK_INT(xmp("<?xml version='1.0'?><!DOCTYPE x [<!ENTITY a 'aaaaaaaaaa'>"
		      "<!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'>"
		      "<!ENTITY c '&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;'>]>" HEAD
		      "<rdf:Description " NS_DC "><dc:title>&c;</dc:title></rdf:Description>" TAIL),
		  SL_OK);
	CHECK_STR(list(DF_TITLE), "");
	CHECK(strstr(m.warnings, "DOCTYPE") != NULL);
	/* an external entity is never fetched */
	CHECK_INT(xmp("<!DOCTYPE x SYSTEM 'file:///etc/passwd'>" HEAD "<rdf:Description " NS_DC
		      "><dc:title>t</dc:title></rdf:Description>" TAIL), SL_OK);
	CHECK_STR(list(DF_TITLE), "");
	CHECK(strstr(m.warnings, "DOCTYPE") != NULL);
	/* an undeclared entity is an error; what came before it is kept */
	CHECK_INT(xmp(HEAD "<rdf:Description " NS_DC "><dc:title>t</dc:title>"
		      "<dc:rights>&x;</dc:rights></rdf:Description>" TAIL), SL_OK);
	CHECK_STR(list(DF_TITLE), "t");
	CHECK_STR(list(DF_COPYRIGHT), "");
	CHECK(strstr(m.warnings, "XMP: ") != NULL);

	/* deeper than XMP_MAX_DEPTH: stopped, the values before kept */
	n = 0;
	big = malloc(1 << 16);
	n += (size_t)sprintf(big + n, HEAD "<rdf:Description " NS_DC "><dc:title>deep</dc:title>"
				     "<dc:x>");
	for (i = 0; i < 2 * XMP_MAX_DEPTH; i++)
		n += (size_t)sprintf(big + n, "<a>");
	big[n] = '\0';
	CHECK_INT(xmp(big), SL_OK);
	CHECK_STR(list(DF_TITLE), "deep");
	CHECK(strstr(m.warnings, "nested too deep") != NULL);
	free(big);

	/* a value over 32 KiB is cut (at a character), with a warning */
	n = 40000;
	big = malloc(n + 512);
	i = (size_t)sprintf(big, HEAD "<rdf:Description " NS_DC "><dc:description>");
	for (; i < n; i += 2)
		big[i] = '\xc3', big[i + 1] = '\xa9';
	strcpy(big + i, "</dc:description></rdf:Description>" TAIL);
	CHECK_INT(xmp(big), SL_OK);
	{
		const char *v[1];
		CHECK_INT(desc_list(&m, DF_DESCRIPTION, v, 1), 1);
		CHECK(strlen(v[0]) <= 32 * 1024 && strlen(v[0]) >= 32 * 1024 - 1);
		CHECK_INT(strlen(v[0]) % 2, 0);
	}
	CHECK(strstr(m.warnings, "cut") != NULL);
	free(big);

	/* an attribute's value is cut the same way */
	n = 40000;
	big = malloc(n + 512);
	i = (size_t)sprintf(big, HEAD "<rdf:Description " NS_XMP " xmp:Label='");
	memset(big + i, 'L', n - i);
	strcpy(big + n, "'/>" TAIL);
	CHECK_INT(xmp(big), SL_OK);
	{
		const char *v[1];
		CHECK_INT(desc_list(&m, DF_LABEL, v, 1), 1);
		CHECK_INT(strlen(v[0]), 32 * 1024);
	}
	CHECK(strstr(m.warnings, "cut") != NULL);
	free(big);

	/* cut anywhere: never more than the whole gives, never a failure */
	{
		const char *s = HEAD "<rdf:Description " NS_DC " " NS_XMP " xmp:Rating='2'>"
				     "<dc:subject><rdf:Bag><rdf:li>k1</rdf:li><rdf:li>k2</rdf:li>"
				     "</rdf:Bag></dc:subject></rdf:Description>" TAIL;
		for (i = 0; i <= strlen(s); i++) {
			reset();
			CHECK_INT(xmp_parse((const uint8_t *)s, i, &m, DS_XMP), SL_OK);
			CHECK(strlen(list(DF_KEYWORD)) <= strlen("k1#k2"));
		}
		CHECK_STR(list(DF_KEYWORD), "k1#k2");
		CHECK_STR(m.warnings, "");
	}

	/* padding after the packet is no error; a control character in the
	 * wrapper's begin attribute (some writers) is none either */
	{
		static const char s[] = "<?xpacket begin='\x01' id='W'?>" HEAD
					"<rdf:Description " NS_DC " dc:title='pad'/>" TAIL
					"\0\0\0\0    garbage";
		reset();
		CHECK_INT(xmp_parse((const uint8_t *)s, sizeof(s) - 1, &m, DS_XMP), SL_OK);
		CHECK_STR(list(DF_TITLE), "pad");
		CHECK_STR(m.warnings, "");
	}
	/* not XML at all */
	CHECK_INT(xmp("\xff\xd8 not xml"), SL_OK);
	CHECK_STR(list(DF_TITLE), "");
	CHECK(strstr(m.warnings, "XMP: ") != NULL);
}

/* An IIM dataset: 0x1C, record, dataset, a 16-bit length. */
static size_t ds(uint8_t *b, int rec, int num, const char *v, size_t n)
{
	b[0] = 0x1C, b[1] = (uint8_t)rec, b[2] = (uint8_t)num;
	b[3] = (uint8_t)(n >> 8), b[4] = (uint8_t)n;
	memcpy(b + 5, v, n);
	return 5 + n;
}

static void test_iptc(void)
{
	uint8_t b[4096];
	size_t n;

	/* 1:90 says UTF-8 */
	n = ds(b, 1, 90, "\x1b%G", 3);
	n += ds(b + n, 2, 5, "Title", 5);
	n += ds(b + n, 2, 25, "K\xc3\xa4se", 6);
	n += ds(b + n, 2, 25, "Sea", 3);
	n += ds(b + n, 2, 80, "Ann", 3);
	n += ds(b + n, 2, 116, "(c) Ann", 7);
	n += ds(b + n, 2, 120, "Line 1\rLine 2", 13);
	n += ds(b + n, 2, 0, "\0\4", 2); /* RecordVersion: not text, skipped */
	memset(b + n, 0, 16);             /* padding */
	reset();
	iptc_parse(b, n + 16, &m);
	CHECK_STR(list(DF_TITLE), "Title");
	CHECK_STR(list(DF_KEYWORD), "K\xc3\xa4se#Sea");
	CHECK_STR(list(DF_CREATOR), "Ann");
	CHECK_STR(list(DF_COPYRIGHT), "(c) Ann");
	CHECK_STR(list(DF_DESCRIPTION), "Line 1\nLine 2");
	CHECK_STR(m.warnings, "");

	/* no 1:90: valid UTF-8 stays, anything else is Windows-1252 */
	n = ds(b, 2, 25, "K\xc3\xa4se", 6);
	n += ds(b + n, 2, 25, "Caf\xe9 \x80 \x93", 8);
	n += ds(b + n, 2, 5, "cut\0here", 8); /* text ends at a NUL */
	reset();
	iptc_parse(b, n, &m);
	CHECK_STR(list(DF_KEYWORD), "K\xc3\xa4se#Caf\xc3\xa9 \xe2\x82\xac \xe2\x80\x9c");
	CHECK_STR(list(DF_TITLE), "cut");
	/* 1:90 says UTF-8 but the bytes are not: '?' for each bad byte */
	n = ds(b, 1, 90, "\x1b%G", 3);
	n += ds(b + n, 2, 5, "Caf\xe9", 4);
	reset();
	iptc_parse(b, n, &m);
	CHECK_STR(list(DF_TITLE), "Caf?");

	/* an extended length (high bit set: the length's own byte count) */
	b[0] = 0x1C, b[1] = 2, b[2] = 120, b[3] = 0x80, b[4] = 4;
	b[5] = 0, b[6] = 0, b[7] = 0, b[8] = 4;
	memcpy(b + 9, "long", 4);
	reset();
	iptc_parse(b, 13, &m);
	CHECK_STR(list(DF_DESCRIPTION), "long");

	/* damage: the datasets before it are kept, with a warning */
	n = ds(b, 2, 5, "kept", 4);
	n += ds(b + n, 2, 25, "lost", 4);
	reset();
	iptc_parse(b, n - 1, &m);
	CHECK_STR(list(DF_TITLE), "kept");
	CHECK_STR(list(DF_KEYWORD), "");
	CHECK(strstr(m.warnings, "runs past") != NULL);
	n = ds(b, 2, 5, "kept", 4);
	b[n++] = 0x1D;
	reset();
	iptc_parse(b, n, &m);
	CHECK_STR(list(DF_TITLE), "kept");
	CHECK(strstr(m.warnings, "marker") != NULL);
}

/* Photoshop image resources: names padded to even, data to even. */
static size_t res(uint8_t *b, unsigned id, const char *name, const uint8_t *d, size_t n)
{
	size_t k = 0, nl = strlen(name);
	memcpy(b, "8BIM", 4);
	b[4] = (uint8_t)(id >> 8), b[5] = (uint8_t)id;
	b[6] = (uint8_t)nl;
	memcpy(b + 7, name, nl);
	k = 6 + ((nl + 2) & ~(size_t)1);
	b[k] = 0, b[k + 1] = 0, b[k + 2] = (uint8_t)(n >> 8), b[k + 3] = (uint8_t)n;
	memcpy(b + k + 4, d, n);
	k += 4 + n;
	if (n & 1)
		b[k++] = 0;
	return k;
}

static void test_psir(void)
{
	uint8_t b[4096], iim[64];
	const char *x = HEAD "<rdf:Description " NS_DC " dc:title='from XMP'/>" TAIL;
	size_t n, k;

	k = ds(iim, 2, 5, "odd", 3); /* 8 bytes */
	k += ds(iim + k, 2, 25, "kw", 2);
	n = res(b, 0x03ED, "", (const uint8_t *)"\0\0\0\1\0", 5); /* another resource, odd */
	n += res(b + n, 0x0404, "IPTC", iim, k);                  /* a name of even length */
	n += res(b + n, 0x0424, "x", (const uint8_t *)x, strlen(x));
	reset();
	iptc_psir(b, n, &m);
	CHECK_STR(list(DF_TITLE), "from XMP"); /* XMP over IPTC */
	CHECK_STR(list(DF_KEYWORD), "kw");
	CHECK_STR(m.warnings, "");
	/* a resource that runs past the block */
	reset();
	iptc_psir(b, n - 4, &m);
	CHECK_STR(list(DF_KEYWORD), "kw");
	CHECK(strstr(m.warnings, "runs past") != NULL);
}

/* Precedence, the keyword merge, cleaning and the bounds. */
static void test_desc_rules(void)
{
	size_t i;
	char v[32];
	const char *out[4];

	reset();
	CHECK_INT(desc_add(&m, DF_TITLE, DS_EXIF, "exif", 4), SL_OK);
	CHECK_STR(list(DF_TITLE), "exif");
	desc_add(&m, DF_TITLE, DS_IPTC, "iptc", 4);
	CHECK_STR(list(DF_TITLE), "iptc");
	desc_add(&m, DF_TITLE, DS_SIDECAR, "side", 4);
	desc_add(&m, DF_TITLE, DS_XMP, "xmp", 3);
	CHECK_STR(list(DF_TITLE), "side");
	/* keywords: XMP's then IPTC's, each once, when XMP is the best */
	desc_add(&m, DF_KEYWORD, DS_IPTC, "b", 1);
	desc_add(&m, DF_KEYWORD, DS_IPTC, "c", 1);
	desc_add(&m, DF_KEYWORD, DS_XMP, "a", 1);
	desc_add(&m, DF_KEYWORD, DS_XMP, "b", 1);
	desc_add(&m, DF_KEYWORD, DS_EXIF, "e", 1);
	CHECK_STR(list(DF_KEYWORD), "a#b#c");
	/* a sidecar's keywords stand alone */
	desc_add(&m, DF_KEYWORD, DS_SIDECAR, "s", 1);
	CHECK_STR(list(DF_KEYWORD), "s");
	/* hierarchical keywords do not merge */
	desc_add(&m, DF_HIER, DS_IPTC, "I|J", 3);
	desc_add(&m, DF_HIER, DS_XMP, "X|Y", 3);
	CHECK_STR(list(DF_HIER), "X|Y");
	/* rating: the best source's first */
	desc_rating(&m, DS_XMP, 2);
	desc_rating(&m, DS_XMP, 3);
	desc_rating(&m, DS_EXIF, 5);
	CHECK_INT(rating(), 2);
	desc_rating(&m, DS_SIDECAR, 0);
	CHECK_INT(rating(), 0);

	/* cleaning: blanks trimmed, controls dropped, CR LF and CR one LF,
	 * bytes that are not UTF-8 one '?' each; blank adds nothing */
	reset();
	desc_add(&m, DF_DESCRIPTION, DS_XMP, " \t\r\n ", 5);
	CHECK_STR(list(DF_DESCRIPTION), "");
	CHECK(m.desc == NULL);
	{
		const char *raw = " a\x01" "b\r\nc\rd\x7f\xff\xc3 \n";
		desc_add(&m, DF_DESCRIPTION, DS_XMP, raw, strlen(raw));
	}
	CHECK_STR(list(DF_DESCRIPTION), "ab\nc\nd??");
	/* over-long and surrogate encodings are not UTF-8 */
	desc_add(&m, DF_LABEL, DS_XMP, "\xc0\xaf\xed\xa0\x80", 5);
	CHECK_STR(list(DF_LABEL), "?????");

	/* the bounds: DESC_MAX_VALUES values, a warning, nothing more */
	reset();
	for (i = 0; i < DESC_MAX_VALUES + 10; i++) {
		snprintf(v, sizeof(v), "k%zu", i);
		CHECK_INT(desc_add(&m, DF_KEYWORD, DS_XMP, v, strlen(v)), SL_OK);
	}
	CHECK_INT(desc_list(&m, DF_KEYWORD, out, 4), DESC_MAX_VALUES);
	CHECK(strstr(m.warnings, "the rest dropped") != NULL);
	/* and DESC_MAX_BYTES */
	reset();
	{
		char *big = malloc(DESC_MAX_BYTES);
		memset(big, 'x', DESC_MAX_BYTES);
		CHECK_INT(desc_add(&m, DF_DESCRIPTION, DS_XMP, big, DESC_MAX_BYTES / 2), SL_OK);
		CHECK_INT(desc_add(&m, DF_TITLE, DS_XMP, big, DESC_MAX_BYTES / 2), SL_OK);
		CHECK_INT(desc_list(&m, DF_DESCRIPTION, out, 4), 1);
		CHECK_INT(desc_list(&m, DF_TITLE, out, 4), 0);
		CHECK(strstr(m.warnings, "the rest dropped") != NULL);
		free(big);
	}
	reset();
}

int main(void)
{
	RUN(test_xmp_attributes);
	RUN(test_xmp_elements);
	RUN(test_xmp_motion);
	RUN(test_xmp_namespaces);
	RUN(test_xmp_ratings);
	RUN(test_xmp_utf16);
	RUN(test_xmp_hostile);
	RUN(test_iptc);
	RUN(test_psir);
	RUN(test_desc_rules);
	return t_done();
}
