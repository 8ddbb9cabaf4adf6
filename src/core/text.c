/* core/text.c - untrusted text made safe for a terminal line and for XML (core/text.h). */
#include <errno.h>
#include <string.h>

#include "core/binio.h"
#include "core/text.h"

size_t utf8_seq_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;	/* allowed range of the second byte */

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* The bytes of the character at P (N bytes left) that a terminal shows as text: its UTF-8
 * length, or 0 for a control character (C0, DEL, C1: U+0080..U+009F, which some terminals
 * take as CSI and the like) or a byte that is not UTF-8. */
static size_t shown_len(const unsigned char *p, size_t n)
{
	if (*p >= 0x20 && *p < 0x7f)
		return 1;
	if (*p < 0x80)
		return 0;
	size_t len = utf8_seq_len(p, n);
	if (len == 2 && p[0] == 0xc2 && p[1] < 0xa0)
		return 0;
	return len;
}

const char *text_for_terminal(const char *s, char *buf, size_t size)
{
	if (!s)
		return "";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;
	while (i < n) {
		size_t len = shown_len(p + i, n - i);
		if (!len)
			break;
		i += len;
	}
	if (i == n)
		return s;	/* the usual case: nothing to copy */
	if (!size)
		return "";
	size_t o = 0;
	for (i = 0; i < n;) {
		size_t len = shown_len(p + i, n - i);
		char esc[5];
		const char *piece = (const char *)p + i;
		size_t plen = len;
		if (!len) {
			static const char hex[] = "0123456789abcdef";
			plen = 2;
			esc[0] = '\\';
			switch (p[i]) {
			case '\t': esc[1] = 't'; break;
			case '\n': esc[1] = 'n'; break;
			case '\r': esc[1] = 'r'; break;
			default:
				esc[1] = 'x';
				esc[2] = hex[p[i] >> 4];
				esc[3] = hex[p[i] & 15];
				plen = 4;
			}
			piece = esc;
			len = 1;	/* one byte of S escaped */
		}
		if (o + plen >= size)
			break;
		memcpy(buf + o, piece, plen);
		o += plen;
		i += len;
	}
	buf[o] = 0;
	return buf;
}

int text_xml_append(struct binbuf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = s ? strlen(s) : 0;
	int rc = 0;
	for (size_t i = 0; i < n && !rc;) {
		const char *e = NULL;
		switch (p[i]) {
		case '<': e = "&lt;"; break;
		case '>': e = "&gt;"; break;
		case '&': e = "&amp;"; break;
		case '"': e = "&quot;"; break;
		case '\t': case '\n': case '\r': e = " "; break;
		}
		if (e) {
			rc = binbuf_put(b, e, strlen(e));
			i++;
		} else if (p[i] < 0x20) {	/* not allowed in XML 1.0, even as a reference */
			i++;
		} else if (p[i] < 0x80) {
			rc = binbuf_put_u8(b, p[i]);
			i++;
		} else {
			size_t len = utf8_seq_len(p + i, n - i);
			rc = len ? binbuf_put(b, p + i, len) : binbuf_put(b, "\xef\xbf\xbd", 3);
			i += len ? len : 1;
		}
	}
	return rc ? -ENOMEM : 0;
}
