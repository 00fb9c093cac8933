/*
 * An incremental, allocation-free CSV tokenizer (RFC 4180): the trace
 * readers (corral/trace.h) and the API server's token file use it.
 */
#ifndef CORRAL_CSV_H
#define CORRAL_CSV_H

#include <stdbool.h>
#include <stddef.h>

/* One field: len bytes at p, not NUL-terminated. p points into the input, or
 * into the caller's scratch buffer for a quoted field with "" escapes. */
typedef struct corral_csv_field {
    const char *p;
    size_t len;
    bool quoted; /* the field was written in double quotes */
} corral_csv_field_t;

/* One record. n is 0 for a blank line (a line terminator alone), which is not
 * the same as a line holding one empty quoted field (""), where n is 1. */
typedef struct corral_csv_record {
    const corral_csv_field_t *fields; /* the tokenizer's field array */
    size_t n;
    int line; /* 1-based line on which the record starts */
} corral_csv_record_t;

/*
 * Tokenizer state. Everything it needs is caller-provided: a field array of
 * max_fields entries and a scratch buffer of max_line bytes, where quoted
 * fields with escapes are unescaped. A record longer than max_line bytes
 * (terminator excluded) or with more than max_fields fields is an error.
 * Fields of a record stay valid until the next call to corral_csv_next or
 * corral_csv_feed. Treat the members as private.
 */
typedef struct corral_csv {
    const char *data; /* input window */
    size_t len, pos;
    bool final; /* no input follows the window */
    corral_csv_field_t *fields;
    size_t max_fields;
    char *scratch;
    size_t max_line;
    int line;      /* line of data[pos] */
    bool bom_done; /* a leading UTF-8 byte order mark was looked for */
    bool skipping; /* after an error: skip to the end of the bad line */
    int err_line;  /* line of the last error */
    /* Option, set after init: leading blanks of a field are skipped (Go's
     * csv.Reader TrimLeadingSpace, which kube's token file reader sets). */
    bool trim_leading_space;
    char err[160]; /* message of the last error */
} corral_csv_t;

/* Initialise c with caller storage; then feed it input. */
void corral_csv_init(corral_csv_t *c, corral_csv_field_t *fields, size_t max_fields, char *scratch,
                     size_t max_line);

/*
 * Give the tokenizer its input window: len bytes at data, starting with the
 * first byte it has not consumed yet. final says whether more input follows.
 * To stream, after CORRAL_EAGAIN drop the first corral_csv_consumed() bytes
 * of the previous window, append new input and feed again; line numbers carry
 * over. The bytes are borrowed until the next feed.
 */
void corral_csv_feed(corral_csv_t *c, const char *data, size_t len, bool final);

/*
 * Read the next record into rec. Returns 1 when a record was read, 0 at the
 * end of final input, CORRAL_EAGAIN when the window ends inside a record and
 * is not final, or an error: CORRAL_EPARSE (a quote in an unquoted field,
 * text after a closing quote, an unterminated quote, a bare CR, a NUL byte)
 * or CORRAL_ETOOBIG (too many fields, record too long). After an error,
 * c->err holds the message and c->err_line its line; the rest of the bad
 * line is skipped and the next call continues with the following line.
 */
int corral_csv_next(corral_csv_t *c, corral_csv_record_t *rec);

/* Bytes of the current window consumed so far. */
size_t corral_csv_consumed(const corral_csv_t *c);

#endif
