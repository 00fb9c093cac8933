/* Trace readers: the CSV tokenizer (quotes, CRLF, limits, streaming), the
 * openb node and pod readers and the Philly job reader, every error with its
 * exact FILE:LINE text, and a smoke test on the shared traces when present. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corral/buf.h"
#include "corral/trace.h"

/* --- helpers ------------------------------------------------------------- */

/* Every diagnostic, one per line. */
static const char *diag_text(corral_diag_t *d, corral_buf_t *b)
{
    corral_buf_reset(b);
    for (size_t i = 0; i < d->n; i++) {
        corral_diag_format(&d->items[i], b);
        corral_buf_putc(b, '\n');
    }
    return corral_buf_str(b);
}

/* Tokenize s (whole, final) into a readable form: one line per record,
 * "LINE:[f1][f2]" (quoted fields as {..}), errors as "LINE:error: msg". */
static void csv_dump_opts(const char *s, size_t len, size_t max_fields, size_t max_line,
                          corral_buf_t *out)
{
    corral_csv_field_t fields[16];
    char scratch[64];
    corral_csv_t c;
    corral_csv_record_t r;
    corral_csv_init(&c, fields, max_fields, scratch, max_line);
    corral_csv_feed(&c, s, len, true);
    int rc;
    while ((rc = corral_csv_next(&c, &r)) != 0) {
        if (rc < 0) {
            corral_buf_printf(out, "%d:error: %s\n", c.err_line, c.err);
            continue;
        }
        corral_buf_printf(out, "%d:", r.line);
        for (size_t i = 0; i < r.n; i++)
            corral_buf_printf(out, r.fields[i].quoted ? "{%.*s}" : "[%.*s]", (int)r.fields[i].len,
                              r.fields[i].p);
        corral_buf_putc(out, '\n');
    }
}

static const char *csv_dump(const char *s, corral_buf_t *out)
{
    corral_buf_reset(out);
    csv_dump_opts(s, strlen(s), 16, 64, out);
    return corral_buf_str(out);
}

/* The same, fed one byte at a time as a stream would be. */
static const char *csv_dump_stream(const char *s, corral_buf_t *out)
{
    corral_csv_field_t fields[16];
    char scratch[64];
    corral_csv_t c;
    corral_csv_record_t r;
    size_t len = strlen(s), b = 0, e = 0;
    corral_buf_reset(out);
    corral_csv_init(&c, fields, 16, scratch, 64);
    for (;;) {
        corral_csv_feed(&c, s + b, e - b, e == len);
        int rc = corral_csv_next(&c, &r);
        if (rc == 0)
            break;
        b += corral_csv_consumed(&c);
        if (rc == CORRAL_EAGAIN) {
            cr_assert(e < len);
            e++;
            continue;
        }
        if (rc < 0) {
            corral_buf_printf(out, "%d:error: %s\n", c.err_line, c.err);
            continue;
        }
        corral_buf_printf(out, "%d:", r.line);
        for (size_t i = 0; i < r.n; i++)
            corral_buf_printf(out, r.fields[i].quoted ? "{%.*s}" : "[%.*s]", (int)r.fields[i].len,
                              r.fields[i].p);
        corral_buf_putc(out, '\n');
    }
    return corral_buf_str(out);
}

typedef struct fixture {
    corral_arena_t a;
    corral_diag_t d;
    corral_buf_t b;
} fixture_t;

static fixture_t fx;

static void fx_setup(void)
{
    corral_arena_init(&fx.a);
    corral_diag_init(&fx.d);
    corral_buf_init(&fx.b);
}

static void fx_teardown(void)
{
    corral_buf_fini(&fx.b);
    corral_diag_fini(&fx.d);
    corral_arena_fini(&fx.a);
}

static int nodes(const char *s, corral_trace_node_t **r, size_t *n)
{
    return corral_trace_read_nodes_mem("n.csv", s, strlen(s), &fx.a, &fx.d, r, n);
}

static int pods(const char *s, corral_trace_pod_t **r, size_t *n)
{
    return corral_trace_read_pods_mem("p.csv", s, strlen(s), &fx.a, &fx.d, r, n);
}

static int jobs(const char *s, corral_trace_job_t **r, size_t *n)
{
    return corral_trace_read_jobs_mem("j.csv", s, strlen(s), &fx.a, &fx.d, r, n);
}

/* Read a pod file that must fail; return its diagnostics. */
static const char *pod_errors(const char *s)
{
    corral_trace_pod_t *r;
    size_t n;
    cr_assert_eq(pods(s, &r, &n), CORRAL_EINVAL, "%s", s);
    cr_assert_null(r);
    cr_assert_eq(n, 0);
    return diag_text(&fx.d, &fx.b);
}

static const char *job_errors(const char *s)
{
    corral_trace_job_t *r;
    size_t n;
    cr_assert_eq(jobs(s, &r, &n), CORRAL_EINVAL, "%s", s);
    cr_assert_null(r);
    return diag_text(&fx.d, &fx.b);
}

static const char *node_errors(const char *s)
{
    corral_trace_node_t *r;
    size_t n;
    cr_assert_eq(nodes(s, &r, &n), CORRAL_EINVAL, "%s", s);
    cr_assert_null(r);
    return diag_text(&fx.d, &fx.b);
}

#define POD_HDR                                                                                    \
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"            \
    "deletion_time,scheduled_time\n"
#define NODE_HDR "sn,cpu_milli,memory_mib,gpu,model\n"
#define JOB_HDR  "timestamp,duration,num_gpus,gpu_time,cluster\n"

/* --- tokenizer ----------------------------------------------------------- */

Test(trace, csv_plain_fields_and_lines)
{
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_str_eq(csv_dump("a,b,c\n1,,3\n", &b), "1:[a][b][c]\n2:[1][][3]\n");
    cr_assert_str_eq(csv_dump("a,b", &b), "1:[a][b]\n"); /* no final newline */
    cr_assert_str_eq(csv_dump("a,", &b), "1:[a][]\n");   /* trailing empty field */
    cr_assert_str_eq(csv_dump(",\n", &b), "1:[][]\n");
    cr_assert_str_eq(csv_dump("", &b), "");
    cr_assert_str_eq(csv_dump("\n", &b), "1:\n"); /* a blank line: no fields */
    cr_assert_str_eq(csv_dump("a\n\nb\n\n", &b), "1:[a]\n2:\n3:[b]\n4:\n");
    cr_assert_str_eq(csv_dump(" a , b \n", &b), "1:[ a ][ b ]\n"); /* blanks are data */
    corral_buf_fini(&b);
}

Test(trace, csv_quoted_fields)
{
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_str_eq(csv_dump("\"a,b\",\"say \"\"hi\"\"\",\"\"\n", &b), "1:{a,b}{say \"hi\"}{}\n");
    cr_assert_str_eq(csv_dump("\"\"\"\"", &b), "1:{\"}\n");
    cr_assert_str_eq(csv_dump("\"x\ny\",2\nz,3\n", &b), "1:{x\ny}[2]\n3:[z][3]\n");
    cr_assert_str_eq(csv_dump("\"a\r\nb\"\r\nc\r\n", &b), "1:{a\r\nb}\n3:[c]\n");
    cr_assert_str_eq(csv_dump("1,\"\"\n", &b), "1:[1]{}\n");
    corral_buf_fini(&b);
}

Test(trace, csv_crlf_and_bom)
{
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_str_eq(csv_dump("a,b\r\nc,d\r\n", &b), "1:[a][b]\n2:[c][d]\n");
    cr_assert_str_eq(csv_dump("a\r\n\r\nb\n", &b), "1:[a]\n2:\n3:[b]\n");
    cr_assert_str_eq(csv_dump("\xEF\xBB\xBFsn,gpu\n", &b), "1:[sn][gpu]\n");
    cr_assert_str_eq(csv_dump("x,\xEF\xBB\xBF\n", &b), "1:[x][\xEF\xBB\xBF]\n"); /* only leading */
    corral_buf_fini(&b);
}

Test(trace, csv_errors_then_recovery)
{
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_str_eq(csv_dump("a\"b,c\nok\n", &b),
                     "1:error: a quote inside an unquoted field (quote the whole field and double "
                     "the quotes inside it)\n2:[ok]\n");
    cr_assert_str_eq(csv_dump("\"a\"b,c\nok\n", &b),
                     "1:error: unexpected text after a closing quote (double a quote inside a "
                     "quoted field)\n2:[ok]\n");
    cr_assert_str_eq(csv_dump("ok\n\"abc\n", &b),
                     "1:[ok]\n2:error: a quoted field is never closed (missing \")\n");
    cr_assert_str_eq(csv_dump("a\rb\nok\n", &b),
                     "1:error: carriage return not followed by a line feed\n2:[ok]\n");
    cr_assert_str_eq(csv_dump("a\r", &b), "1:error: carriage return not followed by a line feed\n");
    const char nul[] = "a\0b\nok\n";
    corral_buf_reset(&b);
    csv_dump_opts(nul, sizeof(nul) - 1, 16, 64, &b);
    cr_assert_str_eq(corral_buf_str(&b), "1:error: NUL byte (is this a binary file?)\n2:[ok]\n");
    corral_buf_fini(&b);
}

Test(trace, csv_limits)
{
    corral_buf_t b;
    corral_buf_init(&b);
    const char *s = "1,2,3,4\n1,2,3,4,5\nok\n";
    csv_dump_opts(s, strlen(s), 4, 64, &b);
    cr_assert_str_eq(corral_buf_str(&b), "1:[1][2][3][4]\n2:error: more than 4 fields\n3:[ok]\n");
    corral_buf_reset(&b);
    s = "12345678\n123456789\n\"1234567\"\"\"\nok";
    csv_dump_opts(s, strlen(s), 4, 8, &b);
    cr_assert_str_eq(corral_buf_str(&b), "1:[12345678]\n2:error: line longer than 8 bytes\n"
                                         "3:error: line longer than 8 bytes\n4:[ok]\n");
    corral_buf_reset(&b);
    s = "12345678\r\n1234567890123456789\r\nok";
    csv_dump_opts(s, strlen(s), 4, 8, &b);
    cr_assert_str_eq(corral_buf_str(&b),
                     "1:[12345678]\n2:error: line longer than 8 bytes\n3:[ok]\n");
    corral_buf_reset(&b);
    s = "\"12345\n78901234567\"\nok"; /* a quoted line feed counts toward the limit */
    csv_dump_opts(s, strlen(s), 4, 8, &b);
    cr_assert_str_eq(corral_buf_str(&b), "1:error: line longer than 8 bytes\n3:[ok]\n");
    corral_buf_fini(&b);
}

Test(trace, csv_streaming_matches_whole_input)
{
    const char *cases[] = {
        "a,b,c\n1,,3\n",
        "\"a,b\",\"say \"\"hi\"\"\",\"\"\r\nx\r\n",
        "\"x\ny\",2\nz,3",
        "a\r\n\r\nb\n\n",
        "\xEF\xBB\xBFsn\n",
        "\xEF\xBB",
        "a\"b,c\nok\n\"a\"b\nok\n",
        "ok\n\"abc\n",
        "a\rb\nok\r",
        "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17\nok\n",
        "0123456789012345678901234567890123456789012345678901234567890123456789\nok\n",
        "\"\"\"\"",
        "a,",
    };
    corral_buf_t whole, stream;
    corral_buf_init(&whole);
    corral_buf_init(&stream);
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(cases); i++)
        cr_assert_str_eq(csv_dump_stream(cases[i], &stream), csv_dump(cases[i], &whole), "case %zu",
                         i);
    corral_buf_fini(&whole);
    corral_buf_fini(&stream);
}

/* --- openb nodes --------------------------------------------------------- */

Test(trace, nodes_valid, .init = fx_setup, .fini = fx_teardown)
{
    corral_trace_node_t *r;
    size_t n;
    const char *s = NODE_HDR "openb-node-0000,32000,262144,0,\n"
                             "openb-node-0001,64000,262144,2,P100\n"
                             "\"node,quoted\",96000, 786432 ,8,\"V100M32\"\n"
                             "openb-node-0003,128000,1048576,8,P100\n\n";
    cr_assert_eq(nodes(s, &r, &n), 0, "%s", diag_text(&fx.d, &fx.b));
    cr_assert_eq(n, 4);
    cr_assert_str_eq(r[0].name, "openb-node-0000");
    cr_assert_eq(r[0].cpu_milli, 32000);
    cr_assert_eq(r[0].memory_mib, 262144);
    cr_assert_eq(r[0].gpus, 0);
    cr_assert_str_eq(r[0].model, "");
    cr_assert_eq(r[0].line, 2);
    cr_assert_str_eq(r[1].model, "P100");
    cr_assert_eq(r[1].gpus, 2);
    cr_assert_str_eq(r[2].name, "node,quoted");
    cr_assert_eq(r[2].memory_mib, 786432);
    cr_assert_str_eq(r[2].model, "V100M32");
    cr_assert_eq(r[3].line, 5);
    cr_assert_eq(r[1].model, r[3].model, "models are interned");
    cr_assert_eq(fx.d.n, 0);
}

Test(trace, nodes_columns_by_name_crlf_extra, .init = fx_setup, .fini = fx_teardown)
{
    corral_trace_node_t *r;
    size_t n;
    const char *s = "model,rack, gpu ,sn,memory_mib,cpu_milli\r\n"
                    "T4,r1,1,n1,1024,8000\r\n"
                    "A10,r2,2,n2,2048,16000.0\r\n";
    cr_assert_eq(nodes(s, &r, &n), 0, "%s", diag_text(&fx.d, &fx.b));
    cr_assert_eq(n, 2);
    cr_assert_str_eq(r[0].name, "n1");
    cr_assert_str_eq(r[0].model, "T4");
    cr_assert_eq(r[0].gpus, 1);
    cr_assert_eq(r[1].cpu_milli, 16000);
    cr_assert_eq(r[1].memory_mib, 2048);
    cr_assert_eq(r[1].line, 3);
}

Test(trace, nodes_header_only_and_empty, .init = fx_setup, .fini = fx_teardown)
{
    corral_trace_node_t *r;
    size_t n = 99;
    cr_assert_eq(nodes(NODE_HDR, &r, &n), 0);
    cr_assert_eq(n, 0);
    cr_assert_null(r);
    cr_assert_str_eq(node_errors(""), "n.csv:1: empty file; expected a header line such as "
                                      "sn,cpu_milli,memory_mib,gpu,model\n");
    corral_diag_fini(&fx.d);
    corral_diag_init(&fx.d);
    cr_assert_str_eq(node_errors("\n" NODE_HDR),
                     "n.csv:1: empty line; expected a header line such as "
                     "sn,cpu_milli,memory_mib,gpu,model\n");
}

Test(trace, nodes_missing_and_duplicate_columns, .init = fx_setup, .fini = fx_teardown)
{
    cr_assert_str_eq(node_errors("sn,cpu_milli,memory_mib,model\nn1,1,1,T4\n"),
                     "n.csv:1: missing column \"gpu\" (the header must name "
                     "sn,cpu_milli,memory_mib,gpu,model)\n");
    corral_diag_fini(&fx.d);
    corral_diag_init(&fx.d);
    cr_assert_str_eq(node_errors("sn,gpu,cpu_milli,memory_mib,gpu,model\n"),
                     "n.csv:1: column \"gpu\" appears twice (columns 2 and 5)\n");
    corral_diag_fini(&fx.d);
    corral_diag_init(&fx.d);
    cr_assert_str_eq(node_errors("name,cpu,mem\n"),
                     "n.csv:1: missing column \"sn\" (the header must name "
                     "sn,cpu_milli,memory_mib,gpu,model)\n"
                     "n.csv:1: missing column \"cpu_milli\" (the header must name "
                     "sn,cpu_milli,memory_mib,gpu,model)\n"
                     "n.csv:1: missing column \"memory_mib\" (the header must name "
                     "sn,cpu_milli,memory_mib,gpu,model)\n"
                     "n.csv:1: missing column \"gpu\" (the header must name "
                     "sn,cpu_milli,memory_mib,gpu,model)\n"
                     "n.csv:1: missing column \"model\" (the header must name "
                     "sn,cpu_milli,memory_mib,gpu,model)\n");
}

Test(trace, nodes_bad_rows_all_reported, .init = fx_setup, .fini = fx_teardown)
{
    const char *s = NODE_HDR "n0,32000,262144,0,\n"
                             ",32000,262144,0,\n"
                             "n2,-5,262144,2,T4\n"
                             "n3,1e3,x,65,T4\n"
                             "n4,32000,262144\n"
                             "n5,99999999999999999999,1,1,T4\n"
                             "\n"
                             "n6,1,1,1,T4\n";
    cr_assert_str_eq(node_errors(s),
                     "n.csv:3: sn: expected a name, got an empty field\n"
                     "n.csv:4: cpu_milli: expected a whole number >= 0, got \"-5\"\n"
                     "n.csv:5: cpu_milli: expected a whole number >= 0, got \"1e3\"\n"
                     "n.csv:5: memory_mib: expected a whole number >= 0, got \"x\"\n"
                     "n.csv:5: gpu: expected a whole number 0-64, got \"65\"\n"
                     "n.csv:6: expected 5 fields as in the header, got 3\n"
                     "n.csv:7: cpu_milli: expected a whole number >= 0, got "
                     "\"99999999999999999999\"\n"
                     "n.csv:8: empty line (blank lines are only allowed at the "
                     "end of the file)\n");
}

Test(trace, nodes_huge_line_and_too_many_fields, .init = fx_setup, .fini = fx_teardown)
{
    corral_buf_t s;
    corral_buf_init(&s);
    corral_buf_puts(&s, NODE_HDR "n0,1,1,0,\n");
    for (int i = 0; i < 100000; i++)
        corral_buf_putc(&s, 'x');
    corral_buf_puts(&s, ",1,1,0,\nn2,1,1,0,\n");
    for (int i = 0; i < 300; i++)
        corral_buf_puts(&s, "1,");
    corral_buf_puts(&s, "1\nn4,1,1,bad,\n");
    cr_assert_str_eq(node_errors(corral_buf_str(&s)),
                     "n.csv:3: line longer than 8192 bytes\n"
                     "n.csv:5: more than 256 fields\n"
                     "n.csv:6: gpu: expected a whole number 0-64, got \"bad\"\n");
    corral_buf_fini(&s);
}

Test(trace, nodes_tokenizer_errors_with_lines, .init = fx_setup, .fini = fx_teardown)
{
    const char *s = NODE_HDR "n0,1,1,0,\n"
                             "\"n\n1\",1,1,0,\n"
                             "n\"2,1,1,0,\n"
                             "n3,1,1,0,\"T4\n";
    cr_assert_str_eq(node_errors(s),
                     "n.csv:5: a quote inside an unquoted field (quote the whole field and double "
                     "the quotes inside it)\n"
                     "n.csv:6: a quoted field is never closed (missing \")\n");
}

Test(trace, value_shown_escaped_and_shortened, .init = fx_setup, .fini = fx_teardown)
{
    const char *s = NODE_HDR "n0,\"a\"\"b\\c\t\",1,0,\n"
                             "n1,12345678901234567890123456789012345678901234567890,1,0,\n";
    cr_assert_str_eq(node_errors(s),
                     "n.csv:2: cpu_milli: expected a whole number >= 0, got \"a\\\"b\\\\c\\x09\"\n"
                     "n.csv:3: cpu_milli: expected a whole number >= 0, got "
                     "\"1234567890123456789012345678901234567890...\"\n");
}

/* --- openb pods ---------------------------------------------------------- */

Test(trace, pods_full_columns, .init = fx_setup, .fini = fx_teardown)
{
    corral_trace_pod_t *r;
    size_t n;
    const char *s = POD_HDR "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
                            "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
                            "openb-pod-0002,8000,30517,0,0,,BE,Pending,9565025,9586760,\n"
                            "openb-pod-0009,12000,16384,8,1000,V100M16|V100M32,LS,Succeeded,"
                            "4975773,12902960,4975773\n"
                            "openb-pod-0012,8000,32768,1,1000,T4,,,,,\n";
    cr_assert_eq(pods(s, &r, &n), 0, "%s", diag_text(&fx.d, &fx.b));
    cr_assert_eq(n, 5);
    cr_assert_str_eq(r[0].name, "openb-pod-0000");
    cr_assert_eq(r[0].cpu_milli, 12000);
    cr_assert_eq(r[0].memory_mib, 16384);
    cr_assert_eq(r[0].num_gpu, 1);
    cr_assert_eq(r[0].gpu_milli, 1000);
    cr_assert_null(r[0].gpu_spec);
    cr_assert_eq(r[0].n_gpu_spec, 0);
    cr_assert_str_eq(r[0].qos, "LS");
    cr_assert_str_eq(r[0].phase, "Running");
    cr_assert_eq(r[0].creation_time, 0);
    cr_assert_eq(r[0].deletion_time, 12537496);
    cr_assert_eq(r[0].scheduled_time, 0);
    cr_assert_eq(r[1].gpu_milli, 460);
    cr_assert_eq(r[0].qos, r[1].qos, "qos is interned");
    cr_assert_eq(r[2].num_gpu, 0);
    cr_assert_eq(r[2].gpu_milli, 0);
    cr_assert_eq(r[2].scheduled_time, -1);
    cr_assert_str_eq(r[2].phase, "Pending");
    cr_assert_eq(r[3].n_gpu_spec, 2);
    cr_assert_str_eq(r[3].gpu_spec[0], "V100M16");
    cr_assert_str_eq(r[3].gpu_spec[1], "V100M32");
    cr_assert_eq(r[3].num_gpu, 8);
    cr_assert_eq(r[4].n_gpu_spec, 1);
    cr_assert_str_eq(r[4].gpu_spec[0], "T4");
    cr_assert_null(r[4].qos);
    cr_assert_null(r[4].phase);
    cr_assert_eq(r[4].creation_time, -1);
    cr_assert_eq(r[4].deletion_time, -1);
    cr_assert_eq(r[4].line, 6);
}

Test(trace, pods_five_columns, .init = fx_setup, .fini = fx_teardown)
{
    corral_trace_pod_t *r;
    size_t n;
    const char *s = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                    "openb-pod-0000,12000,16384,1,1000\n"
                    "openb-pod-0001,6000,12288,2,1000\n"
                    "openb-pod-0002,0,0,1,50\n";
    cr_assert_eq(pods(s, &r, &n), 0, "%s", diag_text(&fx.d, &fx.b));
    cr_assert_eq(n, 3);
    cr_assert_eq(r[1].num_gpu, 2);
    cr_assert_null(r[1].gpu_spec);
    cr_assert_null(r[1].qos);
    cr_assert_eq(r[1].creation_time, -1);
    cr_assert_eq(r[1].deletion_time, -1);
    cr_assert_eq(r[1].scheduled_time, -1);
    cr_assert_eq(r[2].gpu_milli, 50);
}

Test(trace, pods_gpu_rules, .init = fx_setup, .fini = fx_teardown)
{
    const char *s = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                    "p1,1,1,x,0\n"
                    "p2,1,1,65,1000\n"
                    "p3,1,1,1,1001\n"
                    "p4,1,1,0,500\n"
                    "p5,1,1,1,0\n"
                    "p6,1,1,2,500\n"
                    "p7,1,1,-1,0\n"
                    "p8,1,1,64,1000\n";
    cr_assert_str_eq(pod_errors(s),
                     "p.csv:2: num_gpu: expected a whole number 0-64, got \"x\"\n"
                     "p.csv:3: num_gpu: expected a whole number 0-64, got \"65\"\n"
                     "p.csv:4: gpu_milli: expected a whole number 0-1000, got \"1001\"\n"
                     "p.csv:5: gpu_milli: must be 0 when num_gpu is 0, got 500\n"
                     "p.csv:6: gpu_milli: must be 1-1000 when num_gpu is 1, got 0\n"
                     "p.csv:7: gpu_milli: must be 1000 when num_gpu is 2 (only single-GPU pods "
                     "share a GPU), got 500\n"
                     "p.csv:8: num_gpu: expected a whole number 0-64, got \"-1\"\n");
}

Test(trace, pods_optional_fields_checked, .init = fx_setup, .fini = fx_teardown)
{
    const char *s = POD_HDR "p1,1,1,1,1000,T4||G2,LS,Running,0,1,0\n"
                            "p2,1,1,1,1000,|,LS,Running,0,1,0\n"
                            "p3,1,1,1,1000,,LS,Running,-1,1.5,now\n"
                            ",1,1,1,1000,,LS,Running,0,1,0\n"
                            "p5,1,1,1,1000,T4|,LS,Running,0,1,0\n";
    cr_assert_str_eq(pod_errors(s),
                     "p.csv:2: gpu_spec: expected GPU models separated by \"|\", got \"T4||G2\"\n"
                     "p.csv:3: gpu_spec: expected GPU models separated by \"|\", got \"|\"\n"
                     "p.csv:4: creation_time: expected a whole number >= 0, got \"-1\"\n"
                     "p.csv:4: deletion_time: expected a whole number >= 0, got \"1.5\"\n"
                     "p.csv:4: scheduled_time: expected a whole number >= 0, got \"now\"\n"
                     "p.csv:5: name: expected a name, got an empty field\n"
                     "p.csv:6: gpu_spec: expected GPU models separated by \"|\", got \"T4|\"\n");
}

Test(trace, pods_missing_required_column, .init = fx_setup, .fini = fx_teardown)
{
    cr_assert_str_eq(pod_errors("name,cpu_milli,memory_mib,num_gpu\np,1,1,1\n"),
                     "p.csv:1: missing column \"gpu_milli\" (the header must name "
                     "name,cpu_milli,memory_mib,num_gpu,gpu_milli)\n");
}

/* --- Philly jobs --------------------------------------------------------- */

Test(trace, jobs_dates_numbers_and_file_order, .init = fx_setup, .fini = fx_teardown)
{
    corral_trace_job_t *r;
    size_t n;
    const char *s = JOB_HDR "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
                            "2017-09-29 07:58:32,860662.0,8,6885296.0,6c71a0\n"
                            "1970-01-01 00:00:00,0,1,0,\n"
                            "2000-02-29T12:00:00,1.5,2,3,11cb48\n"
                            "3600,66.0004,1,1,x\n"
                            "12.3456,66.0006,128,1,x\n"
                            "1969-12-31 23:59:59,1e3,1,1,x\n";
    cr_assert_eq(jobs(s, &r, &n), 0, "%s", diag_text(&fx.d, &fx.b));
    cr_assert_eq(n, 7);
    cr_assert_eq(r[0].submit_s, 1507532515);
    cr_assert_eq(r[0].submit_ms, INT64_C(1507532515000));
    cr_assert(r[0].submit_is_date);
    cr_assert_float_eq(r[0].duration, 66.0, 1e-12);
    cr_assert_eq(r[0].duration_ms, 66000);
    cr_assert_eq(r[0].num_gpus, 1);
    cr_assert_str_eq(r[0].queue, "11cb48");
    cr_assert_eq(r[0].line, 2);
    cr_assert_eq(r[1].submit_s, 1506671912, "file order is kept, not sorted");
    cr_assert_eq(r[1].num_gpus, 8);
    cr_assert_eq(r[1].line, 3);
    cr_assert_eq(r[2].submit_s, 0);
    cr_assert_null(r[2].queue);
    cr_assert_eq(r[2].duration_ms, 0);
    cr_assert_eq(r[3].submit_s, 951825600);
    cr_assert_eq(r[3].duration_ms, 1500);
    cr_assert_eq(r[3].queue, r[0].queue, "queue names are interned");
    cr_assert_eq(r[4].submit_s, 3600);
    cr_assert_not(r[4].submit_is_date);
    cr_assert_eq(r[4].duration_ms, 66000);
    cr_assert_eq(r[5].submit_ms, 12346);
    cr_assert_eq(r[5].submit_s, 12);
    cr_assert_eq(r[5].duration_ms, 66001);
    cr_assert_eq(r[5].num_gpus, 128);
    cr_assert_eq(r[6].submit_s, -1);
    cr_assert_eq(r[6].submit_ms, -1000);
    cr_assert_eq(r[6].duration_ms, 1000000);
}

Test(trace, jobs_without_cluster_column, .init = fx_setup, .fini = fx_teardown)
{
    corral_trace_job_t *r;
    size_t n;
    const char *s = "num_gpus,duration,timestamp\r\n4,10,100\r\n\r\n";
    cr_assert_eq(jobs(s, &r, &n), 0, "%s", diag_text(&fx.d, &fx.b));
    cr_assert_eq(n, 1);
    cr_assert_eq(r[0].num_gpus, 4);
    cr_assert_eq(r[0].duration_ms, 10000);
    cr_assert_eq(r[0].submit_s, 100);
    cr_assert_null(r[0].queue);
}

Test(trace, jobs_errors, .init = fx_setup, .fini = fx_teardown)
{
    const char *s = "timestamp,duration,num_gpus\n"
                    "2017-02-29 00:00:00,1,1\n"
                    "2017-13-01 00:00:00,1,1\n"
                    "2017-10-09 24:00:00,1,1\n"
                    "2017-10-09,1,1\n"
                    "yesterday,1,1\n"
                    "-5,1,1\n"
                    "1,-1,1\n"
                    "1,abc,1\n"
                    "1,nan,1\n"
                    "1,1,0\n"
                    "1,1,1.5\n"
                    "1,1e13,1\n"
                    "1,.,1\n";
    const char *t = "(UTC) or a number of seconds >= 0, got";
    corral_buf_t want;
    corral_buf_init(&want);
    corral_buf_printf(&want,
                      "j.csv:2: timestamp: expected a date YYYY-MM-DD HH:MM:SS %s "
                      "\"2017-02-29 00:00:00\"\n"
                      "j.csv:3: timestamp: expected a date YYYY-MM-DD HH:MM:SS %s "
                      "\"2017-13-01 00:00:00\"\n"
                      "j.csv:4: timestamp: expected a date YYYY-MM-DD HH:MM:SS %s "
                      "\"2017-10-09 24:00:00\"\n"
                      "j.csv:5: timestamp: expected a date YYYY-MM-DD HH:MM:SS %s \"2017-10-09\"\n"
                      "j.csv:6: timestamp: expected a date YYYY-MM-DD HH:MM:SS %s \"yesterday\"\n"
                      "j.csv:7: timestamp: expected a date YYYY-MM-DD HH:MM:SS %s \"-5\"\n"
                      "j.csv:8: duration: expected a number of seconds >= 0, got \"-1\"\n"
                      "j.csv:9: duration: expected a number of seconds >= 0, got \"abc\"\n"
                      "j.csv:10: duration: expected a number of seconds >= 0, got \"nan\"\n"
                      "j.csv:11: num_gpus: expected a whole number 1-65536, got \"0\"\n"
                      "j.csv:12: num_gpus: expected a whole number 1-65536, got \"1.5\"\n"
                      "j.csv:13: duration: expected a number of seconds >= 0, got \"1e13\"\n"
                      "j.csv:14: duration: expected a number of seconds >= 0, got \".\"\n",
                      t, t, t, t, t, t);
    cr_assert_str_eq(job_errors(s), corral_buf_str(&want));
    corral_buf_fini(&want);
}

Test(trace, jobs_missing_columns, .init = fx_setup, .fini = fx_teardown)
{
    cr_assert_str_eq(job_errors("time,duration,gpus\n1,1,1\n"),
                     "j.csv:1: missing column \"timestamp\" (the header must name "
                     "timestamp,duration,num_gpus)\n"
                     "j.csv:1: missing column \"num_gpus\" (the header must name "
                     "timestamp,duration,num_gpus)\n");
}

/* --- files --------------------------------------------------------------- */

Test(trace, read_from_path, .init = fx_setup, .fini = fx_teardown)
{
    char path[] = "/tmp/corral-trace-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char *s = JOB_HDR "1,2,3,4,vc\n1,2,0,4,vc\n";
    cr_assert_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
    close(fd);
    corral_trace_job_t *r;
    size_t n;
    cr_assert_eq(corral_trace_read_jobs(path, &fx.a, &fx.d, &r, &n), CORRAL_EINVAL);
    corral_buf_t want;
    corral_buf_init(&want);
    corral_buf_printf(&want, "%s:3: num_gpus: expected a whole number 1-65536, got \"0\"\n", path);
    cr_assert_str_eq(diag_text(&fx.d, &fx.b), corral_buf_str(&want));
    corral_buf_fini(&want);
    unlink(path);

    corral_trace_node_t *nr;
    corral_trace_pod_t *pr;
    cr_assert_eq(corral_trace_read_nodes("/nonexistent/n.csv", &fx.a, &fx.d, &nr, &n),
                 CORRAL_ENOENT);
    cr_assert_null(nr);
    cr_assert_eq(corral_trace_read_pods("/nonexistent/p.csv", &fx.a, &fx.d, &pr, &n),
                 CORRAL_ENOENT);
    cr_assert_eq(n, 0);
}

/* --- the shared traces, when this machine has them ------------------------ */

static const char *traces_dir(void)
{
    static const char *const dirs[] = {"../shared/traces", "/work/shared/traces"};
    const char *env = getenv("CORRAL_TRACES");
    struct stat st;
    if (env) /* when set, only there */
        return stat(env, &st) == 0 && S_ISDIR(st.st_mode) ? env : NULL;
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(dirs); i++)
        if (stat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode))
            return dirs[i];
    return NULL;
}

static char *trace_path(const char *dir, const char *file)
{
    static char buf[4][512];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, sizeof(buf[0]), "%s/%s", dir, file);
    return p;
}

Test(trace, shared_traces_smoke, .init = fx_setup, .fini = fx_teardown, .timeout = 30)
{
    const char *dir = traces_dir();
    if (!dir)
        cr_skip_test("shared traces not present (set CORRAL_TRACES)");
    corral_trace_node_t *nodes_r;
    corral_trace_pod_t *pods_r;
    corral_trace_job_t *jobs_r;
    size_t n;
    const char *o = "alibaba-openb-2023/";
    char f[128];
    snprintf(f, sizeof(f), "%sopenb_node_list_gpu_node.csv", o);
    cr_assert_eq(corral_trace_read_nodes(trace_path(dir, f), &fx.a, &fx.d, &nodes_r, &n), 0, "%s",
                 diag_text(&fx.d, &fx.b));
    long gpus = 0;
    for (size_t i = 0; i < n; i++)
        gpus += nodes_r[i].gpus;
    cr_assert_eq(n, 1213);
    cr_assert_eq(gpus, 6212);
    snprintf(f, sizeof(f), "%sopenb_node_list_all_node.csv", o);
    cr_assert_eq(corral_trace_read_nodes(trace_path(dir, f), &fx.a, &fx.d, &nodes_r, &n), 0);
    cr_assert_eq(n, 1523);

    snprintf(f, sizeof(f), "%sopenb_pod_list_default.csv", o);
    cr_assert_eq(corral_trace_read_pods(trace_path(dir, f), &fx.a, &fx.d, &pods_r, &n), 0, "%s",
                 diag_text(&fx.d, &fx.b));
    cr_assert_eq(n, 8152);
    size_t cpu_only = 0, sharing = 0, pending = 0;
    for (size_t i = 0; i < n; i++) {
        cpu_only += pods_r[i].num_gpu == 0;
        sharing += pods_r[i].num_gpu == 1 && pods_r[i].gpu_milli < 1000;
        pending += pods_r[i].scheduled_time < 0;
    }
    cr_assert_eq(cpu_only, 1088);
    cr_assert_eq(sharing, 3078);
    cr_assert_eq(pending, 897);
    snprintf(f, sizeof(f), "%sopenb_pod_list_gpuspec33.csv", o);
    cr_assert_eq(corral_trace_read_pods(trace_path(dir, f), &fx.a, &fx.d, &pods_r, &n), 0);
    size_t with_spec = 0;
    for (size_t i = 0; i < n; i++)
        with_spec += pods_r[i].n_gpu_spec > 0;
    cr_assert_eq(with_spec, 2388);
    snprintf(f, sizeof(f), "%sopenb_pod_list_multigpu50.csv", o);
    cr_assert_eq(corral_trace_read_pods(trace_path(dir, f), &fx.a, &fx.d, &pods_r, &n), 0);
    cr_assert_eq(n, 9061);

    cr_assert_eq(corral_trace_read_jobs(trace_path(dir, "philly/philly_jobs_pollux.csv"), &fx.a,
                                        &fx.d, &jobs_r, &n),
                 0, "%s", diag_text(&fx.d, &fx.b));
    cr_assert_eq(n, 82247);
    cr_assert_eq(jobs_r[0].submit_s, 1507532515); /* 2017-10-09 07:01:55 */
    cr_assert_str_eq(jobs_r[0].queue, "11cb48");
    cr_assert_eq(jobs_r[n - 1].line, 82248);
}
