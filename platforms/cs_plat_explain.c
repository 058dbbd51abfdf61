/*
 * cs_plat_explain.c - SimGrid's refusal of a platform file in collstep's
 * words (contract of cs__pfile_explain in cs_plat_file.h): one line, the
 * file and the line of the element at fault (and the column of what
 * SimGrid's message quotes, where the line has it), SimGrid's own message, and
 * for the messages SimGrid 3.32 leaves cryptic what is missing:
 *
 *   "Link 'X' not found!"   (xbt_assert while building a Cluster zone: no
 *       line, and a backtrace on stderr, which the child process that
 *       loads the file keeps in its log) - a <host_link> names X: a
 *       split-duplex link's halves are X_UP / X_DOWN, or the X_UP of a link
 *       that has no halves, or no such link;
 *   "Link not found: X"     (a <link_ctn>) - with a direction, the link
 *       must be declared sharing_policy="SPLITDUPLEX"; without, no such
 *       link is declared (before the route).
 * Anything else keeps SimGrid's words alone.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "cs_plat_file.h"

static int is_elem(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static int attr_is(const xmlNode *n, const char *attr, const char *v)
{
    xmlChar *a = xmlGetProp(n, (const xmlChar *)attr);
    int hit = a && strcmp((const char *)a, v) == 0;
    xmlFree(a);
    return hit;
}

/* The element `elem` whose `attr` (or `attr2`) is v, preferring the last
 * one at or before `line` (any when line is 0). */
static const xmlNode *find_by(const xmlNode *parent, const char *elem, const char *attr,
                              const char *attr2, const char *v, int line, const xmlNode *best)
{
    for (const xmlNode *n = parent->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        if (is_elem(n, elem) && (attr_is(n, attr, v) || (attr2 && attr_is(n, attr2, v)))) {
            long l = xmlGetLineNo(n);
            if (best == NULL || (line > 0 && l <= line))
                best = n;
        }
        best = find_by(n, elem, attr, attr2, v, line, best);
    }
    return best;
}

/* What a <link id=X> declaration says: 0 none, 1 SPLITDUPLEX, 2 another or
 * no sharing_policy (one link for both directions).  *line its line. */
static int link_kind(const cs__pfile_t *f, const char *x, int *line, char *pol, size_t len)
{
    *line = cs__pfile_attr(f, "link", x, "sharing_policy", pol, len);
    if (*line == 0)
        return 0;
    return strcmp(pol, "SPLITDUPLEX") == 0 ? 1 : 2;
}

/* The split-duplex link X_UP / X_DOWN belongs to: its base, or "". */
static void base_of(const char *x, char *b, size_t len)
{
    size_t n = strlen(x);
    b[0] = '\0';
    if (n > 3 && strcmp(x + n - 3, "_UP") == 0)
        snprintf(b, len, "%.*s", (int)(n - 3), x);
    else if (n > 5 && strcmp(x + n - 5, "_DOWN") == 0)
        snprintf(b, len, "%.*s", (int)(n - 5), x);
}

static const char *policy_words(const char *pol)
{
    return pol[0] ? pol : "no sharing_policy, which SimGrid takes as SHARED";
}

/* A <host_link> naming x. */
static void why_host_link(const cs__pfile_t *f, const char *x, int *line, char *why, size_t len)
{
    const xmlNode *hl = find_by((const xmlNode *)f->doc, "host_link", "up", "down", x, 0, NULL);
    if (hl && *line == 0)
        *line = (int)xmlGetLineNo(hl);
    char pol[32], b[256];
    int lline, kind = link_kind(f, x, &lline, pol, sizeof(pol));
    base_of(x, b, sizeof(b));
    if (kind == 1) {
        snprintf(why, len,
                 "<host_link> names link %s, which line %d declares SPLITDUPLEX: SimGrid 3.32 "
                 "names its halves %s_UP and %s_DOWN; write up=\"%s_UP\" down=\"%s_DOWN\"",
                 x, lline, x, x, x, x);
    } else if (kind == 2) {
        snprintf(why, len,
                 "<host_link> names link %s (line %d), which SimGrid 3.32 had not built when it "
                 "built this zone; declare it before the <host_link>, in the same zone",
                 x, lline);
    } else if (b[0] && (kind = link_kind(f, b, &lline, pol, sizeof(pol))) != 0) {
        snprintf(why, len,
                 "<host_link> names %s, a half of link %s, but line %d declares %s with %s: "
                 "only a link declared sharing_policy=\"SPLITDUPLEX\" has halves; declare it "
                 "so, or name the link itself (up=\"%s\" down=\"%s\")",
                 x, b, lline, b, policy_words(pol), b, b);
    } else {
        snprintf(why, len, "<host_link> names %s, but no <link id=\"%s\"> is declared", x, x);
    }
}

/* A <link_ctn id=x> near `line`. */
static void why_link_ctn(const cs__pfile_t *f, const char *x, int *line, char *why, size_t len)
{
    const xmlNode *c = find_by((const xmlNode *)f->doc, "link_ctn", "id", NULL, x, *line, NULL);
    if (c && (*line == 0 || xmlGetLineNo(c) <= *line))
        *line = (int)xmlGetLineNo(c);
    xmlChar *dir = c ? xmlGetProp(c, (const xmlChar *)"direction") : NULL;
    char pol[32];
    int lline, kind = link_kind(f, x, &lline, pol, sizeof(pol));
    if (kind == 0) {
        snprintf(why, len, "no <link id=\"%s\"> is declared", x);
    } else if (dir && kind == 2) {
        snprintf(why, len,
                 "<link_ctn id=\"%s\" direction=\"%s\"> takes one half of a split-duplex link, "
                 "but line %d declares %s with %s; declare it sharing_policy=\"SPLITDUPLEX\", or "
                 "drop the direction",
                 x, (const char *)dir, lline, x, policy_words(pol));
    } else if (lline > *line && *line > 0) {
        snprintf(why, len, "link %s is declared at line %d, after this route: declare it first",
                 x, lline);
    } else {
        why[0] = '\0';
    }
    xmlFree(dir);
}

/* The column (from 1) on line `line` of the file at `path` of the token
 * SimGrid's words quote (`X', 'X', or what follows "number:" or "not
 * found:"): an attribute's name where it names one (blank, X, '='), else a
 * quoted value, the one of a bandwidth, latency or speed first (a number
 * SimGrid could not read), else the token anywhere on the line; 0 when the
 * words quote none or the line does not have it. */
static int column_of(const char *path, int line, const char *words)
{
    char tok[128] = "";
    const char *a = strchr(words, '`'), *q = strchr(words, '\''), *num = strstr(words, "number:");
    const char *open = a && (!q || a < q) ? a : q, *nf = strstr(words, "not found: ");
    int is_num = num != NULL;
    if (!num && nf)
        num = nf + 4; /* "Link not found: X" */
    if (num) {
        num += 7;
        while (*num == ' ')
            num++;
        snprintf(tok, sizeof(tok), "%.*s", (int)strcspn(num, " \t\n"), num);
    } else if (open) {
        const char *close = strchr(open + 1, '\'');
        if (close && close > open + 1)
            snprintf(tok, sizeof(tok), "%.*s", (int)(close - open - 1), open + 1);
    }
    if (!tok[0] || line <= 0 || !path)
        return 0;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n;
    int l = 0, col = 0;
    size_t tl = strlen(tok);
    while ((n = getline(&buf, &cap, fp)) >= 0)
        if (++l == line) {
            const char *hit = NULL;
            /* an attribute's name: a blank before it, '=' after (blanks
             * between allowed) */
            for (const char *p = buf; !is_num && !hit && (p = strstr(p, tok)); p++) {
                const char *e = p + tl;
                while (*e == ' ' || *e == '\t')
                    e++;
                if (p > buf && isspace((unsigned char)p[-1]) && *e == '=')
                    hit = p;
            }
            /* a link not found: the id that names it (a route's src or dst
             * may read the same) */
            for (int i = 0; nf && !hit && i < 2; i++) {
                char pat[160];
                snprintf(pat, sizeof(pat), i ? "id='%s'" : "id=\"%s\"", tok);
                const char *p = strstr(buf, pat);
                if (p)
                    hit = p + 4;
            }
            /* a quoted value: a number's attribute first */
            static const char *const numeric[] = {"bandwidth", "latency", "speed", NULL};
            for (int i = 0; is_num && !hit && numeric[i]; i++) {
                char pat[160];
                snprintf(pat, sizeof(pat), "%s=\"%s\"", numeric[i], tok);
                const char *p = strstr(buf, pat);
                if (!p) {
                    snprintf(pat, sizeof(pat), "%s='%s'", numeric[i], tok);
                    p = strstr(buf, pat);
                }
                if (p)
                    hit = p + strlen(numeric[i]) + 2;
            }
            for (const char *p = buf; !hit && (p = strstr(p, tok)); p++)
                if (p > buf && (p[-1] == '"' || p[-1] == '\'') && (p[tl] == '"' || p[tl] == '\''))
                    hit = p;
            if (!hit)
                hit = strstr(buf, tok);
            col = hit ? (int)(hit - buf) + 1 : 0;
            break;
        }
    free(buf);
    fclose(fp);
    return col;
}

/* The file's lines with XML comments blanked (kept across lines in
 * *in_comment), so that a commented-out element is not taken for one. */
static void uncomment(char *line, int *in_comment)
{
    for (char *c = line; *c;) {
        if (*in_comment) {
            char *e = strstr(c, "-->");
            char *stop = e ? e + 3 : c + strlen(c);
            memset(c, ' ', (size_t)(stop - c));
            if (e)
                *in_comment = 0;
            c = stop;
        } else {
            char *o = strstr(c, "<!--");
            if (!o)
                break;
            *in_comment = 1;
            c = o;
        }
    }
}

/* 1 when an element <tag (outside comments) is in the file. */
static int file_has(const char *path, const char *tag)
{
    FILE *fp = path ? fopen(path, "r") : NULL;
    if (!fp)
        return 0;
    char *buf = NULL;
    size_t cap = 0;
    int found = 0, com = 0;
    while (!found && getline(&buf, &cap, fp) >= 0) {
        uncomment(buf, &com);
        found = strstr(buf, tag) != NULL;
    }
    free(buf);
    fclose(fp);
    return found;
}

/* In s, attr = "v" (or 'v'; blanks around '=' allowed): where v starts. */
static const char *attr_value(const char *s, const char *attr, const char *v)
{
    size_t al = strlen(attr), vl = strlen(v);
    for (const char *p = s; (p = strstr(p, attr)) != NULL; p += al) {
        if (p > s && !isspace((unsigned char)p[-1]))
            continue;
        const char *q = p + al;
        while (isspace((unsigned char)*q))
            q++;
        if (*q++ != '=')
            continue;
        while (isspace((unsigned char)*q))
            q++;
        if ((*q == '"' || *q == '\'') && strncmp(q + 1, v, vl) == 0 && q[1 + vl] == *q)
            return q + 1;
    }
    return NULL;
}

/* The first line of the file holding an element <tag ... attr="v" outside
 * comments (on the tag's line), 0 when none; *col: the column of v there. */
static int line_of(const char *path, const char *tag, const char *attr, const char *v, int *col)
{
    FILE *fp = path ? fopen(path, "r") : NULL;
    if (!fp)
        return 0;
    char *buf = NULL;
    size_t cap = 0;
    int n = 0, found = 0, com = 0;
    while (!found && getline(&buf, &cap, fp) >= 0) {
        n++;
        uncomment(buf, &com);
        const char *t = strstr(buf, tag), *a = t ? attr_value(t, attr, v) : NULL;
        if ((found = a != NULL))
            *col = (int)(a - buf) + 1;
    }
    free(buf);
    fclose(fp);
    return found ? n : 0;
}

/* The name quoted in SimGrid's words between `pre` and `post` (the whole
 * of it, quotes inside included): 1 and out filled, 0 when they do not
 * read so or it does not fit. */
static int quoted(const char *words, const char *pre, const char *post, char *out, size_t len)
{
    size_t pl = strlen(pre);
    if (strncmp(words, pre, pl) != 0)
        return 0;
    const char *e = strstr(words + pl, post);
    if (!e || (size_t)(e - (words + pl)) >= len)
        return 0;
    memcpy(out, words + pl, (size_t)(e - (words + pl)));
    out[e - (words + pl)] = '\0';
    return 1;
}

void cs__pfile_explain(const cs__pfile_t *f, const char *shown, int line, const char *words,
                       int ideal, char *out, size_t len)
{
    char x[256] = "", why[700] = "";
    size_t wl = strlen(words);
    if (f && f->doc) {
        if (strncmp(words, "Link '", 6) == 0 && wl > 18 &&
            strcmp(words + wl - 12, "' not found!") == 0) {
            snprintf(x, sizeof(x), "%.*s", (int)(wl - 18), words + 6);
            why_host_link(f, x, &line, why, sizeof(why));
        } else if (sscanf(words, "Link not found: %255s", x) == 1) {
            why_link_ctn(f, x, &line, why, sizeof(why));
        }
    }
    /* SimGrid seals a zone at its end tag and names no line of its own for
     * a <host_link> to a host the zone lacks: the <host_link>'s */
    int col = 0;
    if (f && quoted(words, "Host not found: '", "'", x, sizeof(x))) {
        int at = line_of(f->fname, "<host_link", "id", x, &col);
        if (at > 0)
            line = at;
        snprintf(why, sizeof(why), "expected the id of a host of the zone%s%s", at > 0 ? " in "
                 "this <host_link>" : "", file_has(f->fname, "<cluster") ? " (a <cluster>'s "
                 "hosts are named prefix, number, suffix: its radical's numbers)" : "");
    }
    /* SimGrid's own words say the opposite ("does name") */
    if (quoted(words, "Route dst='", "' does name a node", x, sizeof(x)) ||
        quoted(words, "Route src='", "' does name a node", x, sizeof(x)))
        snprintf(why, sizeof(why), "no host, router or zone of the file is named '%s': a "
                 "route's src and dst must name one", x);
    if (strncmp(words, "unknown unit", 12) == 0)
        snprintf(why, sizeof(why), "expected a unit right after the number, without a blank "
                                   "(a bandwidth 25GBps or 200Gbps, a latency 1us, a speed 1Gf)");
    if (strncmp(words, "cannot parse number", 19) == 0)
        snprintf(why, sizeof(why), "expected a number, with its unit (a bandwidth 25GBps or "
                                   "200Gbps, a latency 1us, a speed 1Gf)");
    char where[64] = "";
    if (!col)
        col = f ? column_of(f->fname, line, words) : 0;
    if (line > 0 && col > 0)
        snprintf(where, sizeof(where), ":%d:%d", line, col);
    else if (line > 0)
        snprintf(where, sizeof(where), ":%d", line);
    snprintf(out, len, "%s%s: SimGrid cannot load it%s: %s%s%s", shown, where,
             ideal ? " as the ideal model does (every <link> without sharing_policy made "
                     "SPLITDUPLEX)"
                   : "",
             words, why[0] ? ": " : "", why);
}
