/*
 * Malformed schedule text: every case must fail with the expected status and
 * a message that starts with the exact "t.sched:LINE:COL: ..." text given in
 * the table (the parser's whole contract for users: where, what was
 * expected, what was found).  Run under the sanitizer build to check that no
 * failure path leaks.
 */
#include <stdlib.h>
#include <string.h>

#include "cs_test.h"
#include "cs_text.h"

#define H "collstep-schedule 1\ncollective allreduce ranks 4 chunks 8\n"
#define H0 H "rank 0\n"

typedef struct bad_case {
    const char *name;
    const char *text;
    size_t len; /* 0: strlen(text) */
    int code;
    const char *prefix; /* expected start of err.msg */
} bad_case_t;

/* A version-2 header with group g = ranks 0..2 of 4. */
#define H2 "collstep-schedule 2\ncollective allreduce ranks 4 chunks 1\ngroup g ranks 0-2\n"

static const bad_case_t cases[] = {
    {"empty file", "", 0, CS_ERR_PARSE,
     "t.sched:1:1: expected 'collstep-schedule', found end of file"},
    {"only comments", "# nothing\n\n   # here\n", 0, CS_ERR_PARSE,
     "t.sched:4:1: expected 'collstep-schedule', found end of file"},
    {"missing header", "collective allreduce ranks 4 chunks 8\n", 0, CS_ERR_PARSE,
     "t.sched:1:1: expected 'collstep-schedule', found 'collective'"},
    {"wrong version", "collstep-schedule 3\n", 0, CS_ERR_PARSE,
     "t.sched:1:19: expected format version 1 to 2, found '3'"},
    {"huge version", "collstep-schedule 99999999999999999999999\n", 0, CS_ERR_PARSE,
     "t.sched:1:19: expected a number <= 4294967295, found '99999999999999999999999'"},
    {"no collective line", "collstep-schedule 1\n", 0, CS_ERR_PARSE,
     "t.sched:2:1: expected 'collective', found end of file"},
    {"unknown collective", "collstep-schedule 1\ncollective allsum ranks 4 chunks 8\n", 0,
     CS_ERR_PARSE,
     "t.sched:2:12: expected a collective (allreduce, reduce-scatter, allgather, broadcast, "
     "reduce, alltoall), found 'allsum'"},
    {"truncated collective line", "collstep-schedule 1\ncollective allreduce ranks", 0,
     CS_ERR_PARSE, "t.sched:2:27: expected a number of ranks, found end of file"},
    {"zero ranks", "collstep-schedule 1\ncollective allreduce ranks 0 chunks 8\n", 0,
     CS_ERR_PARSE, "t.sched:2:28: expected a number >= 1, found '0'"},
    {"huge rank count", "collstep-schedule 1\ncollective allreduce ranks 99999999 chunks 8\n", 0,
     CS_ERR_PARSE, "t.sched:2:28: expected a number <= "},
    {"chunks not a multiple of ranks",
     "collstep-schedule 1\ncollective allgather ranks 4 chunks 6\n", 0, CS_ERR_PARSE,
     "t.sched:2:37: expected a multiple of 4 (the number of ranks) for allgather, found '6'"},
    {"root on allreduce", "collstep-schedule 1\ncollective allreduce ranks 4 chunks 8 root 1\n",
     0, CS_ERR_PARSE, "t.sched:2:39: expected 'inplace' or end of line, found 'root'"},
    {"root out of range", "collstep-schedule 1\ncollective broadcast ranks 4 chunks 8 root 4\n",
     0, CS_ERR_PARSE, "t.sched:2:44: expected a root rank < 4, found '4'"},
    {"root given twice",
     "collstep-schedule 1\ncollective broadcast ranks 4 chunks 8 root 1 root 1\n", 0,
     CS_ERR_PARSE, "t.sched:2:46: expected 'inplace' or end of line, found 'root'"},
    {"in-place reduce-scatter",
     "collstep-schedule 1\ncollective reduce-scatter ranks 2 chunks 2 inplace\n", 0,
     CS_ERR_PARSE, "t.sched:2:44: expected end of line, found 'inplace'"},
    {"algorithm without name", H "algorithm\n", 0, CS_ERR_PARSE,
     "t.sched:3:10: expected an algorithm name of 1 to 63 characters, found end of line"},
    {"algorithm with a control byte", H "algorithm ring a=1 \x01\n", 0, CS_ERR_PARSE,
     "t.sched:3:20: expected end of line, found '\\x01'"},
    {"step before any rank", H "0: nop\n", 0, CS_ERR_PARSE,
     "t.sched:3:1: expected 'rank', found '0'"},
    {"buffer before any rank", H "buffer t base 0 chunks 1\n", 0, CS_ERR_PARSE,
     "t.sched:3:1: expected 'rank', found 'buffer'"},
    {"rank out of range", H "rank 4\n", 0, CS_ERR_PARSE,
     "t.sched:3:6: expected a rank in [0, 4) (ranks come in increasing order), found '4'"},
    {"rank repeated", H "rank 1\nrank 1\n", 0, CS_ERR_PARSE,
     "t.sched:4:6: expected a rank in [2, 4) (ranks come in increasing order), found '1'"},
    {"junk after rank", H "rank 0 x\n", 0, CS_ERR_PARSE,
     "t.sched:3:8: expected end of line, found 'x'"},
    {"step number skipped", H0 "  0: nop\n  2: nop\n", 0, CS_ERR_PARSE,
     "t.sched:5:3: expected step 1, found '2'"},
    {"duplicate step number", H0 "  0: nop\n  0: nop\n", 0, CS_ERR_PARSE,
     "t.sched:5:3: expected step 1, found '0'"},
    {"missing colon", H0 "  0 nop\n", 0, CS_ERR_PARSE, "t.sched:4:5: expected ':', found 'nop'"},
    {"unknown step kind", H0 "  0: sned to 1 in[0:1]\n", 0, CS_ERR_PARSE,
     "t.sched:4:6: expected a step kind (send, recv, rrecv, reduce, copy, nop), found 'sned'"},
    {"long token is truncated", H0 "  0: sendsendsendsendsendsendsendsendsendsend\n", 0,
     CS_ERR_PARSE,
     "t.sched:4:6: expected a step kind (send, recv, rrecv, reduce, copy, nop), found "
     "'sendsendsendsendsendsendsendsend...'"},
    {"send without 'to'", H0 "  0: send 1 in[0:1]\n", 0, CS_ERR_PARSE,
     "t.sched:4:11: expected 'to', found '1'"},
    {"negative peer", H0 "  0: send to -1 in[0:1]\n", 0, CS_ERR_PARSE,
     "t.sched:4:14: expected a peer rank, found '-1'"},
    {"peer out of range", H0 "  0: send to 9 in[0:1]\n", 0, CS_ERR_PARSE,
     "t.sched:4:3: rank 0 step 0: peer 9 out of range [0, 4)"},
    {"huge channel", H0 "  0: send to 1 chan 70000 in[0:1]\n", 0, CS_ERR_PARSE,
     "t.sched:4:21: expected a number <= 65535, found '70000'"},
    {"huge chunk index", H0 "  0: send to 1 in[123456789012:2]\n", 0, CS_ERR_PARSE,
     "t.sched:4:19: expected a number <= 4294967295, found '123456789012'"},
    {"range out of bounds", H0 "  0: send to 1 in[6:9]\n", 0, CS_ERR_PARSE,
     "t.sched:4:3: rank 0 step 0: source range in[6:9] outside the buffer's 8 chunks"},
    {"unknown buffer", H0 "  0: send to 1 foo[0:1]\n", 0, CS_ERR_PARSE,
     "t.sched:4:16: expected a buffer of rank 0 (in, out), found 'foo'"},
    {"reversed range", H0 "  0: send to 1 in[3:1]\n", 0, CS_ERR_PARSE,
     "t.sched:4:21: expected an end index greater than 3, found '1'"},
    {"empty range", H0 "  0: send to 1 in[3:3]\n", 0, CS_ERR_PARSE,
     "t.sched:4:21: expected an end index greater than 3, found '3'"},
    {"unclosed range", H0 "  0: send to 1 in[3:4\n", 0, CS_ERR_PARSE,
     "t.sched:4:22: expected ']', found end of line"},
    {"missing arrow", H0 "  0: copy in[0:1] out[0:1]\n", 0, CS_ERR_PARSE,
     "t.sched:4:19: expected '->', found 'out'"},
    {"shape mismatch", "collstep-schedule 1\ncollective allreduce ranks 2 chunks 4\nrank 0\n"
                       "  0: copy in[0:1] -> out[1:2]\n",
     0, CS_ERR_PARSE,
     "t.sched:4:3: rank 0 step 0: source in[0] and destination out[1] have different chunk "
     "shapes"},
    {"length mismatch", H0 "  0: copy in[0:1] -> out[0:2]\n", 0, CS_ERR_PARSE,
     "t.sched:4:3: rank 0 step 0: source has 1 chunks but destination 2"},
    {"dependency on itself", H0 "  0: nop\n  1: nop after 1\n", 0, CS_ERR_PARSE,
     "t.sched:5:3: rank 0 step 1: dependency on step 1, which is not an earlier step"},
    {"dependency on a missing step", H0 "  0: nop\n  1: nop after 0,7\n", 0, CS_ERR_PARSE,
     "t.sched:5:3: rank 0 step 1: dependency on step 7, which is not an earlier step"},
    {"dependency list ends with a comma", H0 "  0: nop\n  1: nop after 0,\n", 0, CS_ERR_PARSE,
     "t.sched:5:18: expected a step number, found end of line"},
    {"buffer after steps", H0 "  0: nop\n  buffer t base 0 chunks 1\n", 0, CS_ERR_PARSE,
     "t.sched:5:3: expected 'rank' or a step number (buffers come before steps), found "
     "'buffer'"},
    {"buffer declared twice", H0 "  buffer t base 0 chunks 1\n  buffer t base 1 chunks 1\n", 0,
     CS_ERR_PARSE, "t.sched:5:3: rank 0: buffer 't' declared twice"},
    {"buffer named in", H0 "  buffer in base 0 chunks 1\n", 0, CS_ERR_PARSE,
     "t.sched:4:3: rank 0: buffer 'in' declared twice"},
    {"buffer of zero chunks", H0 "  buffer t base 0 chunks 0\n", 0, CS_ERR_PARSE,
     "t.sched:4:26: expected a number >= 1, found '0'"},
    {"buffer name too long", H0 "  buffer abcdefghijklmnopqrstuvwxyz0123456 base 0 chunks 1\n",
     0, CS_ERR_PARSE, "t.sched:4:10: expected a buffer name ([A-Za-z_][A-Za-z0-9_]*, at most 31"},
    {"truncated step", H0 "  0: send to", 0, CS_ERR_PARSE,
     "t.sched:4:13: expected a peer rank, found end of file"},
    {"truncated range", H0 "  0: send to 1 in[0:", 0, CS_ERR_PARSE,
     "t.sched:4:21: expected a chunk index, found end of file"},
    {"truncated at a line boundary", H0 "  0: send to 1 in[0:1]\n", 0, CS_ERR_PARSE,
     "t.sched:5:1: expected a step, 'rank' or 'end' (the last line of every schedule: the file "
     "may be truncated), found end of file"},
    {"content after end", H0 "end\nrank 1\n", 0, CS_ERR_PARSE,
     "t.sched:5:1: expected end of file after 'end', found 'rank'"},
    {"no rank before end", "collstep-schedule 1\ncollective allreduce ranks 2 chunks 2\n", 0,
     CS_ERR_PARSE, "t.sched:3:1: expected 'rank' or 'end'"},
    {"NUL byte inside a line", H0 "  0: nop\0 after\n", sizeof(H0 "  0: nop\0 after\n") - 1,
     CS_ERR_PARSE, "t.sched:4:9: expected end of line, found '\\x00'"},
    /* format version 2: groups and switch steps */
    {"switch step in version 1", H0 "  0: switch allreduce g in[0:1] -> out[0:1]\n", 0,
     CS_ERR_PARSE,
     "t.sched:4:6: expected a step kind of format version 1 (send, recv, rrecv, reduce, copy, "
     "nop; switch steps need 'collstep-schedule 2'), found 'switch'"},
    {"group line in version 1", "collstep-schedule 1\ncollective allreduce ranks 2 chunks 1\n"
     "group g ranks 0-1\n", 0, CS_ERR_PARSE,
     "t.sched:3:1: expected 'rank' (group lines need 'collstep-schedule 2'), found 'group'"},
    {"unknown kind in version 2", H2 "rank 0\n  0: sned\n", 0, CS_ERR_PARSE,
     "t.sched:5:6: expected a step kind (send, recv, rrecv, reduce, copy, nop, switch), found "
     "'sned'"},
    {"group ranks not increasing", "collstep-schedule 2\ncollective allreduce ranks 4 chunks 1\n"
     "group g ranks 0,2,1\n", 0, CS_ERR_PARSE,
     "t.sched:3:19: expected a rank in [3, 4) (the ranks of a group are distinct and "
     "increasing), found '1'"},
    {"group rank out of range", "collstep-schedule 2\ncollective allreduce ranks 4 chunks 1\n"
     "group g ranks 0-4\n", 0, CS_ERR_PARSE,
     "t.sched:3:15: expected a rank in [0, 4)"},
    {"group range backwards", "collstep-schedule 2\ncollective allreduce ranks 4 chunks 1\n"
     "group g ranks 2-1\n", 0, CS_ERR_PARSE,
     "t.sched:3:17: expected a rank greater than 2, found '1'"},
    {"group declared twice", H2 "group g ranks 1\n", 0, CS_ERR_PARSE,
     "t.sched:4:7: expected a group name not declared before, found 'g'"},
    {"group without name", "collstep-schedule 2\ncollective allreduce ranks 4 chunks 1\n"
     "group 3g ranks 1\n", 0, CS_ERR_PARSE, "t.sched:3:7: expected a group name"},
    {"unknown switch operation", H2 "rank 0\n  0: switch gather g in[0:1]\n", 0, CS_ERR_PARSE,
     "t.sched:5:13: expected a switch operation (allreduce, reduce, multicast), found "
     "'gather'"},
    {"unknown group", H2 "rank 0\n  0: switch allreduce h in[0:1] -> out[0:1]\n", 0,
     CS_ERR_PARSE, "t.sched:5:23: expected a group (g), found 'h'"},
    {"not a member", H2 "rank 3\n  0: switch allreduce g in[0:1] -> out[0:1]\n", 0,
     CS_ERR_PARSE, "t.sched:5:23: expected a group with rank 3 among its ranks, found 'g'"},
    {"allreduce without source", H2 "rank 0\n  0: switch allreduce g -> out[0:1]\n", 0,
     CS_ERR_PARSE,
     "t.sched:5:3: rank 0 step 0: switch allreduce needs a source (the member's contribution) "
     "and a destination (the reduced range)"},
    {"reduce without source", H2 "rank 1\n  0: switch reduce g -> out[0:1] after 0\n", 0,
     CS_ERR_PARSE, "t.sched:5:3: rank 1 step 0: switch reduce needs a source"},
    {"multicast with nothing", H2 "rank 0\n  0: switch multicast g chan 2\n", 0,
     CS_ERR_PARSE, "t.sched:5:3: rank 0 step 0: switch multicast needs a destination"},
    {"switch range outside", H2 "rank 0\n  0: switch reduce g in[0:2]\n", 0, CS_ERR_PARSE,
     "t.sched:5:3: rank 0 step 0: source range in[0:2] outside the buffer's 1 chunks"},
    {"switch missing range after arrow", H2 "rank 0\n  0: switch reduce g in[0:1] ->\n", 0,
     CS_ERR_PARSE, "t.sched:5:32: expected a buffer of rank 0 (in, out), found end of line"},
    {"quote is escaped", H0 "  0: 'x\n", 0, CS_ERR_PARSE,
     "t.sched:4:6: expected a step kind (send, recv, rrecv, reduce, copy, nop), found '\\''"},
    {"binary garbage", "\x7f" "ELF\x02\x01\x01\x00\x00\x00\xff\xfe", 12, CS_ERR_PARSE,
     "t.sched:1:1: expected 'collstep-schedule', found '\\x7f'"},
    {"NUL bytes only", "\0\0\0\0", 4, CS_ERR_PARSE,
     "t.sched:1:1: expected 'collstep-schedule', found '\\x00'"},
};

static void run_case(const bad_case_t *c)
{
    cs_err_t err = {0};
    size_t len = c->len ? c->len : strlen(c->text);
    cs_sched_t *s = cs_sched_parse(c->text, len, "t.sched", &err);
    CS_TEST_CHECK(s == NULL, "%s: parsed but must fail", c->name);
    cs_sched_destroy(s);
    CS_TEST_CHECK(err.code == c->code, "%s: code %s, expected %s (%s)", c->name,
                  cs_status_name(err.code), cs_status_name(c->code), err.msg);
    CS_TEST_CHECK(strncmp(err.msg, c->prefix, strlen(c->prefix)) == 0,
                  "%s:\n  got      %s\n  expected %s", c->name, err.msg, c->prefix);
    /* The same input without an error record must not crash either. */
    CS_TEST_CHECK(cs_sched_parse(c->text, len, "t.sched", NULL) == NULL, "%s: NULL err",
                  c->name);
}

/* A line longer than the limit is refused without reading it whole. */
static void test_long_line(void)
{
    size_t hl = strlen(H0), n = hl + CS_TEXT_MAX_LINE + 2;
    char *t = malloc(n + 4);
    CS_TEST_CHECK(t != NULL, "malloc");
    if (t == NULL)
        return;
    memcpy(t, H0, hl);
    memset(t + hl, '#', n - hl - 1);
    t[n - 1] = '\n';
    cs_err_t err = {0};
    CS_TEST_CHECK(cs_sched_parse(t, n, "t.sched", &err) == NULL, "long line parsed");
    char want[128];
    snprintf(want, sizeof(want), "t.sched:4:%u: expected a line of at most %u bytes",
             CS_TEXT_MAX_LINE + 1, CS_TEXT_MAX_LINE);
    CS_TEST_CHECK(err.code == CS_ERR_PARSE && strncmp(err.msg, want, strlen(want)) == 0,
                  "long line: %s", err.msg);
    /* A line of exactly the limit is fine (a comment here). */
    t[n - 2] = '\n';
    memcpy(t + n - 1, "end\n", 4);
    cs_err_clear(&err);
    cs_sched_t *s = cs_sched_parse(t, n + 3, "t.sched", &err);
    CS_TEST_CHECK(s != NULL, "line at the limit: %s", err.msg);
    cs_sched_destroy(s);
    free(t);
}

/* The first error recorded in err wins (cs_err_set's contract). */
static void test_err_kept(void)
{
    cs_err_t err = {0};
    cs_err_set(&err, CS_ERR_IO, "earlier");
    CS_TEST_CHECK(cs_sched_parse("x", 1, "t", &err) == NULL && err.code == CS_ERR_IO &&
                      strcmp(err.msg, "earlier") == 0,
                  "earlier error kept: %s", err.msg);
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_sched_parse(NULL, 3, "t", &err) == NULL && err.code == CS_ERR_INVAL,
                  "NULL text with a length");
    cs_err_clear(&err);
    CS_TEST_CHECK(cs_sched_parse(NULL, 0, NULL, &err) == NULL &&
                      strncmp(err.msg, "<input>:1:1: expected 'collstep-schedule'", 40) == 0,
                  "NULL text, no name: %s", err.msg);
}

int main(void)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
    test_long_line();
    test_err_kept();
    return cs_test_finish();
}
