/* core/text.h - text from the files and logs a user brings (program paths, argv, comm, symbol
 * names of an ELF) made safe for where spent shows it. Such text can hold any byte but NUL: a
 * `python3 -c` script's newlines broke `trace stats`'s table into lines, and a symbol or file
 * name holding an escape sequence (ESC [ 31 m) reached the terminal and recoloured it. JSON has
 * its own escaping (core/json.h), which keeps every byte recoverable; these are for reading. */
#ifndef SPENT_CORE_TEXT_H
#define SPENT_CORE_TEXT_H

#include <stddef.h>

struct binbuf;

/* Length of the valid UTF-8 sequence at P (N >= 1 bytes left), 0 when it is not one: overlong
 * forms, surrogates (U+D800..DFFF) and code points above U+10FFFF are invalid (RFC 3629). */
size_t utf8_seq_len(const unsigned char *p, size_t n);

/* Room for text_for_terminal's copy of a name shown in a table or a header line. */
#define TEXT_SHOWN_MAX 512

/*
 * S for a terminal line: S itself when it is printable (ASCII from space to '~', and UTF-8
 * that encodes no control character), else a copy in BUF (SIZE bytes) in which \t \n \r are
 * written as those two characters, every other C0 or C1 control character, DEL and every
 * byte that is not UTF-8 as \xHH, so the line stays one line and nothing reaches the
 * terminal as a control sequence. A backslash stays as it is: the copy is for reading, not
 * for parsing back (the JSON output keeps the exact bytes). A copy longer than SIZE is cut
 * before an escape or a character, never inside one. S NULL gives "".
 */
const char *text_for_terminal(const char *s, char *buf, size_t size);

/* Append S to B as XML character data or attribute text (SVG): < > & " as entities, the
 * control characters XML 1.0 forbids dropped (tab, newline and CR kept as a space), bytes
 * that are not UTF-8 as U+FFFD, so the document stays well-formed whatever bytes a name holds.
 * 0 or -ENOMEM. */
int text_xml_append(struct binbuf *b, const char *s);

#endif
