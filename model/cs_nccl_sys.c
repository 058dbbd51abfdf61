/*
 * cs_nccl_sys.c - the system NCCL's tuner sees on a collstep platform:
 * the GPU (from the preset or a `gpu` property), the NVLink domains and
 * hosts the ranks span, each tier's rate as NCCL counts it, and the graphs
 * (channels and per-channel bandwidth) NCCL's topology search finds there.
 *
 * The search is NCCL's procedure (search.cc: speeds tried from the highest
 * one a GPU's links can carry, channels consuming that speed on every
 * link, the best nChannels x speed kept, channels doubled at high speeds)
 * applied to the per-GPU totals, which is exact for switched fabrics
 * (NVSwitch, NVL72, one NIC per GPU) and an approximation for GPU meshes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cs_nccl.h"

typedef struct gpu_info {
    const char *name;
    int cc, arch, rccl;
    int links;           /* NVLink (xGMI) links per GPU */
    double link_line;    /* GB/s per link per direction, the hardware's */
} gpu_info_t;

/* Links and line rates: NVIDIA's and AMD's datasheets (docs/hardware.md). */
static const gpu_info_t gpus[] = {
    {"p100", 60, CS_NCCL_VOLTA, 0, 4, 20.0},
    {"v100", 70, CS_NCCL_VOLTA, 0, 6, 25.0},
    {"a100", 80, CS_NCCL_AMPERE, 0, 12, 25.0},
    {"h100", 90, CS_NCCL_HOPPER, 0, 18, 25.0},
    {"h200", 90, CS_NCCL_HOPPER, 0, 18, 25.0},
    {"b200", 100, CS_NCCL_BLACKWELL, 0, 18, 50.0},
    {"gb200", 100, CS_NCCL_BLACKWELL, 0, 18, 50.0},
    {"mi300x", 94, CS_NCCL_HOPPER, 1, 7, 64.0},
};
#define NGPUS ((int)(sizeof(gpus) / sizeof(gpus[0])))

/* Which GPU a preset has. */
static const char *preset_gpu(const char *spec, char *buf, size_t len)
{
    static const struct {
        const char *preset, *gpu;
    } map[] = {{"summit", "v100"},           {"ac922-v100-ib100", "v100"},
               {"minsky-p100-ib100", "p100"}, {"x86-p100-pcie-10gbe", "p100"},
               {"dgx1-v100-ib100", "v100"},   {"hgx-h100", "h100"},
               {"hgx-h200", "h200"},          {"gb200-nvl72", "gb200"},
               {"mi300x", "mi300x"}};
    const char *g = strstr(spec, "gpu=");
    if (g) {
        size_t n = strcspn(g + 4, ",");
        snprintf(buf, len, "%.*s", (int)n, g + 4);
        return buf;
    }
    size_t nl = strcspn(spec, ":");
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strlen(map[i].preset) == nl && strncmp(spec, map[i].preset, nl) == 0)
            return map[i].gpu;
    return NULL;
}

/* The value of attribute `name` of the element starting at el (up to its
 * '>'), either quote, into buf; NULL when it has none. */
static const char *xml_attr(const char *el, const char *name, char *buf, size_t len)
{
    size_t nl = strlen(name), end = strcspn(el, ">");
    for (size_t i = 1; i + nl + 2 < end; i++) {
        if (strncmp(el + i, name, nl) != 0 || !strchr(" \t\r\n", el[i - 1]))
            continue;
        size_t j = i + nl;
        j += strspn(el + j, " \t\r\n");
        if (el[j] != '=')
            continue;
        j++;
        j += strspn(el + j, " \t\r\n");
        if (el[j] != '"' && el[j] != '\'')
            continue;
        const char *v = el + j + 1, *q = strchr(v, el[j]);
        if (!q || q > el + end)
            return NULL;
        snprintf(buf, len, "%.*s", (int)(q - v), v);
        return buf;
    }
    return NULL;
}

/* A file's `gpu` property (the first one outside comments), else the GPU
 * of the preset a file exported by `collstep platform export` came from
 * (its `collstep_spec` property). */
static const char *file_gpu(const char *xml, char *buf, size_t len, const char **at)
{
    char id[32], spec[256];
    const char *from = NULL;
    *at = NULL;
    for (const char *p = xml; p && (p = strchr(p, '<')) != NULL; p++) {
        if (strncmp(p, "<!--", 4) == 0) {
            if ((p = strstr(p, "-->")) == NULL)
                break; /* an unterminated comment: nothing after it counts */
            continue;
        }
        if (strncmp(p, "<prop", 5) != 0 || !strchr(" \t\r\n", p[5]) ||
            !xml_attr(p, "id", id, sizeof(id)))
            continue;
        if (strcmp(id, "gpu") == 0) {
            *at = p;
            return xml_attr(p, "value", buf, len);
        }
        if (!from && strcmp(id, "collstep_spec") == 0 && xml_attr(p, "value", spec, sizeof(spec)))
            from = preset_gpu(spec, buf, len);
    }
    return from;
}

static const gpu_info_t *gpu_find(const char *name)
{
    for (int i = 0; name && i < NGPUS; i++)
        if (strcasecmp(gpus[i].name, name) == 0)
            return &gpus[i];
    return NULL;
}

const char *cs_nccl_device_name(const cs_platform_t *plat)
{
    /* as the drivers name the parts these presets have (nccl-tests logs
     * print them so: "Tesla V100-SXM2-16GB", "NVIDIA H100 80GB HBM3") */
    static const struct {
        const char *gpu, *name;
    } names[] = {{"p100", "Tesla P100-SXM2-16GB"},  {"v100", "Tesla V100-SXM2-16GB"},
                 {"a100", "NVIDIA A100-SXM4-80GB"}, {"h100", "NVIDIA H100 80GB HBM3"},
                 {"h200", "NVIDIA H200"},           {"b200", "NVIDIA B200"},
                 {"gb200", "NVIDIA GB200"},         {"mi300x", "AMD Instinct MI300X"}};
    char buf[32];
    const char *at = NULL, *spec = plat->spec[0] ? plat->spec : plat->name;
    const char *g = plat->is_file ? (plat->xml ? file_gpu(plat->xml, buf, sizeof(buf), &at) : NULL)
                                  : preset_gpu(spec, buf, sizeof(buf));
    /* the PCIe P100 preset, or a file exported from it without a gpu of its own */
    const char *from = plat->is_file && plat->xml && !at
                           ? strstr(plat->xml, "\"collstep_spec\" value=\"")
                           : NULL;
    if (g && strcasecmp(g, "p100") == 0 &&
        (plat->is_file ? from && strncmp(from + 23, "x86-p100-pcie", 13) == 0
                       : strstr(spec, "pcie") != NULL))
        return "Tesla P100-PCIE-16GB";
    for (size_t i = 0; g && i < sizeof(names) / sizeof(names[0]); i++)
        if (strcasecmp(names[i].gpu, g) == 0)
            return names[i].name;
    return NULL;
}

/* search.cc's speed arrays (GB/s per channel) */
static const double sp_intra_old[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 0};
static const double sp_intra_90[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3, 0};
static const double sp_intra_100[] = {90, 80, 70, 60, 50, 40, 30, 24, 20, 19, 0};
static const double sp_inter_old[] = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0};
static const double sp_inter_90[] = {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0};

/* The best nChannels x speed with speed <= maxbw and nch * speed <= total
 * (`extra` channels' worth more for patterns that cross a GPU twice),
 * channels up to maxch (or exactly forced when > 0). */
static void search(const double *sp, double maxbw, double total, int maxch, int forced, int extra,
                   int *nch, double *bw)
{
    int bn = 0;
    double bs = 0;
    for (int i = 0; sp[i] > 0; i++) {
        double s = sp[i];
        /* a link's rate scaled to NCCL's figure may miss it by rounding
         * (PCIe Gen3 x16: 15.75 GB/s x 12 / 15.754 is NCCL's 12 GB/s) */
        if (s > maxbw * (1 + 1e-3))
            continue;
        int n = forced > 0 ? forced : (int)floor(total / s + 1e-9) - extra;
        if (forced > 0 && (n + extra) * s > total + 1e-9)
            continue;
        if (n > maxch)
            n = maxch;
        if (n < 1)
            continue;
        if (n * s > bn * bs + 1e-9) {
            bn = n;
            bs = s;
        }
        if (n * s >= total - 1e-9 || n == maxch || forced > 0)
            break;
    }
    *nch = bn;
    *bw = bs;
}

/* ncclTopoDupChannels: doubled, at half the speed, unless the speed is
 * low. */
static void dup_channels(int cc, int *nch, double *bw, int maxch)
{
    if (*bw < 25 || (cc > 80 && *bw < 50 && *nch > 4))
        return;
    *nch = 2 * *nch < maxch ? 2 * *nch : maxch;
    *bw /= 2;
}

static int count_distinct(char *const *v, int n, int *first_of)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        int j = 0;
        while (j < i && strcmp(v[j], v[i]) != 0)
            j++;
        first_of[i] = j < i ? first_of[j] : k++;
    }
    return k;
}

int cs_nccl_sys_from(const cs_platform_t *plat, char *const *hosts, int nranks,
                     const cs_nccl_consts_t *k, cs_nccl_sys_t *sys, cs_err_t *err)
{
    char buf[32];
    memset(sys, 0, sizeof(*sys));
    cs_nccl_fit_init(&sys->fit);
    if (plat->nccl_fit[0]) {
        char where[300];
        snprintf(where, sizeof(where), "%s:%d", plat->spec, plat->nccl_fit_line);
        int st = cs_nccl_fit_parse(plat->nccl_fit, where, &sys->fit, err);
        if (st != CS_OK)
            return st;
    }
    const char *at = NULL;
    const char *gname = plat->is_file ? file_gpu(plat->xml, buf, sizeof(buf), &at)
                                      : preset_gpu(plat->spec[0] ? plat->spec : plat->name, buf,
                                                   sizeof(buf));
    const gpu_info_t *g = gpu_find(gname);
    if (!g) {
        /* the property's line and column in the file */
        char where[48] = "";
        if (at) {
            int line = 1;
            const char *bol = plat->xml;
            for (const char *c = plat->xml; c < at; c++)
                if (*c == '\n')
                    line++, bol = c + 1;
            snprintf(where, sizeof(where), ":%d:%d", line, (int)(at - bol) + 1);
        }
        return cs_err_set(err, CS_ERR_INVAL,
                          "%s%s: --model nccl needs the GPU: %s%s%s; give the hosts a property "
                          "<prop id=\"gpu\" value=\"h100\"/> (known: p100 v100 a100 h100 h200 "
                          "b200 gb200 mi300x)",
                          plat->spec[0] ? plat->spec : plat->name, where,
                          gname ? "unknown GPU '" : "the platform names none",
                          gname ? gname : "", gname ? "'" : "");
    }
    snprintf(sys->gpu, sizeof(sys->gpu), "%s", g->name);
    sys->nranks = nranks;
    sys->cc = g->cc;
    sys->arch = g->arch;
    sys->rccl = g->rccl;
    /* hosts and NVLink domains: ranks in the same block of the innermost
     * dimension share a domain when that tier is NVLink */
    int *hid = malloc(sizeof(int) * (size_t)(nranks > 0 ? nranks : 1));
    if (!hid)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    sys->nhosts = count_distinct(hosts, nranks, hid);
    free(hid);
    int nvl_tier = -1, nic_tier = -1, pci_tier = -1;
    for (int t = 0; t < plat->ntiers; t++) {
        int c = cs_sim_hw_class(plat->tiers[t].name);
        double scale = 1.0;
        if (c == CS_SIM_HW_NVLINK) {
            double per = g->cc == 60 ? 18.0 : k->nvlink_bw[g->arch];
            if (g->rccl)
                per = 48.0; /* RCCL: xGMI on gfx94x */
            scale = per / g->link_line;
            if (nvl_tier < 0 || strcmp(plat->tiers[t].name, "nvlink") == 0 ||
                strcmp(plat->tiers[t].name, "xgmi") == 0)
                nvl_tier = t;
        } else if (strcmp(plat->tiers[t].name, "pcie") == 0) {
            /* NCCL: width x per-lane / 80 (pci_bw for Gen3 x16) against PCIe's
             * line rate (15.754 GB/s for Gen3 x16) */
            scale = k->pci_bw / 15.754;
            pci_tier = t;
        } else if (strcmp(plat->tiers[t].name, "nic") == 0) {
            nic_tier = t;
        }
        sys->tier_scale[t] = scale;
    }
    /* the innermost dimension is the node (an NVLink domain where that
     * tier is NVLink; a PCIe node otherwise): NCCL's nNodes */
    int domain = nranks;
    if (plat->ndims > 0)
        domain = plat->dims[0];
    if (!plat->is_file && strncmp(plat->spec, "gb200-nvl72", 11) == 0)
        domain = 72;
    if (domain < 1)
        domain = 1;
    /* the domains the ranks' hosts are in (a map may put ranks anywhere):
     * the platform's device index of each host, over the domain size */
    uint64_t ndom = plat->ndevices / (uint64_t)domain + 2;
    int *per = calloc(ndom, sizeof(int));
    if (!per)
        return cs_err_set(err, CS_ERR_NOMEM, "out of memory");
    int local = 0;
    sys->nnodes = 0;
    for (int r = 0; r < nranks; r++) {
        uint64_t idx = (uint64_t)r;
        if (plat->hosts && (idx >= plat->ndevices || strcmp(plat->hosts[idx], hosts[r]) != 0)) {
            idx = plat->ndevices; /* not a device host: a domain of its own (the last) */
            for (uint64_t j = 0; j < plat->ndevices; j++)
                if (strcmp(plat->hosts[j], hosts[r]) == 0) {
                    idx = j;
                    break;
                }
        }
        uint64_t dm = idx / (uint64_t)domain;
        if (dm >= ndom)
            dm = ndom - 1;
        if (per[dm]++ == 0)
            sys->nnodes++;
        if (per[dm] > local)
            local = per[dm];
    }
    free(per);
    if (sys->nnodes < 1)
        sys->nnodes = 1;
    if (local < 1)
        local = 1;
    /* per GPU, as NCCL counts it */
    if (nvl_tier >= 0)
        sys->gpu_nvlink = g->links * g->link_line * sys->tier_scale[nvl_tier];
    sys->gpu_pci = pci_tier >= 0 ? plat->tiers[pci_tier].bandwidth * 1e-9 * sys->tier_scale[pci_tier]
                                 : k->pci_bw;
    if (nic_tier >= 0)
        sys->gpu_net = plat->tiers[nic_tier].bandwidth * 1e-9;
    for (int s = 0; s < plat->nswitches; s++) {
        if (plat->switches[s].kind == CS_REDUCE_NVLS)
            sys->nvls = g->cc >= 90 && !g->rccl;
        else
            sys->collnet = 1;
    }
    /* NVLS needs more than 2 GPUs of a node (2 from 2.29); in 2.20 no
     * multi-node NVLink domain (MNNVL).  2.20's nvls.cc also tests
     * nNodes > 1, but before init.cc has counted the nodes (it is still 0
     * there), so NVLSTree runs across nodes as from 2.21 */
    if (k->minor >= 29 ? local < 2 : local <= 2)
        sys->nvls = 0;
    if (k->minor < 21 && domain > 8)
        sys->nvls = 0;
    /* graphs */
    int maxch = k->minor >= 25 ? 32 : 16, nvls_arity = k->minor >= 21 ? 32 : 8;
    int type_intra = nvl_tier >= 0 ? CS_SIM_HW_NVLINK : CS_SIM_HW_PCI;
    double total = type_intra == CS_SIM_HW_NVLINK ? sys->gpu_nvlink : sys->gpu_pci;
    const double *spi = g->cc >= 100 ? sp_intra_100 : g->cc >= 90 ? sp_intra_90 : sp_intra_old;
    const double *spn = g->cc >= 90 ? sp_inter_90 : sp_inter_old;
    cs_nccl_graph_t ring = {0, 0, 0, type_intra};
    /* a full mesh: a link of the class inside a node to each other GPU,
     * as the GPU has and as the platform's links count (each GPU's
     * local - 1 links, each shared by two GPUs) */
    if (type_intra == CS_SIM_HW_NVLINK && g->rccl && local > 1 && g->links == local - 1 &&
        nvl_tier >= 0 &&
        2 * plat->tiers[nvl_tier].nlinks == plat->ndevices * (uint64_t)(local - 1))
        sys->mesh = local;
    if (g->rccl) {
        /* RCCL's hand-written model of an 8-GPU xGMI mesh: 28 rings sharing
         * the 7 links, total / 28 each */
        ring.nch = 28;
        ring.bw_intra = total / 28;
    } else if (sys->nnodes == 1) {
        search(spi, total, total, maxch, 0, 0, &ring.nch, &ring.bw_intra);
        dup_channels(g->cc, &ring.nch, &ring.bw_intra, maxch);
    } else {
        /* one ring per NIC of a node, at the NIC's (or its PCIe path's) speed */
        double nicbw = sys->gpu_net > 0 ? fmin(sys->gpu_net, sys->gpu_pci > 0 ? sys->gpu_pci : 1e9)
                                        : 12.0; /* topo.h's NET_BW, 100 Gb/s */
        int nics = nic_tier >= 0 ? (int)(plat->tiers[nic_tier].nlinks /
                                         (uint64_t)(plat->ndims > 1 ? plat->dims[plat->ndims - 1] : 1))
                                 : 1;
        if (nics < 1)
            nics = 1;
        if (nics > local)
            nics = local;
        /* each ring leaves by a NIC of its own: the NICs' capacity bounds
         * them (search.cc stops once nChannels x speed reaches it: 8 x 48
         * GB/s on an HGX node), and the GPUs' NVLinks: a ring enters its
         * node at one GPU and leaves at another, so a GPU's NVLink carries
         * every ring but the one leaving (or entering) by its own NIC:
         * where every GPU has a NIC and a ring, (local - 1) / local of
         * them (on an HGX node 7 x 48 of its 370.8 GB/s), else all of them
         * on a GPU that none leaves by; at most NCCL's search's channels
         * (MAXCHANNELS / 2) */
        double total_nic = nics * nicbw * (1 + 1e-3), nvl = sys->gpu_nvlink * (1 + 1e-3);
        int lim = nics < maxch ? nics : maxch, nvlink = type_intra == CS_SIM_HW_NVLINK &&
                                                          sys->gpu_nvlink > 0 && local > 1;
        search(spn, nicbw, nvlink ? fmin(total_nic, nvl * local / (local - 1.0)) : total_nic,
               lim, 0, 0, &ring.nch, &ring.bw_intra);
        if (nvlink && ring.nch < local) /* a GPU no ring leaves by carries them all */
            search(spn, nicbw, fmin(total_nic, nvl), lim, 0, 0, &ring.nch, &ring.bw_intra);
        dup_channels(g->cc, &ring.nch, &ring.bw_intra, maxch);
    }
    ring.bw_inter = ring.bw_intra;
    sys->graph[CS_NCCL_RING] = ring;
    sys->graph[CS_NCCL_TREE] = ring;
    sys->graph[CS_NCCL_COLLNET_CHAIN] = ring;
    cs_nccl_graph_t cnd = ring;
    if (cnd.nch > 8)
        cnd.nch = 8;
    sys->graph[CS_NCCL_COLLNET_DIRECT] = cnd;
    sys->graph[CS_NCCL_PAT] = ring;
    if (sys->nvls && type_intra == CS_SIM_HW_NVLINK) {
        cs_nccl_graph_t nv = {0, 0, 0, CS_SIM_HW_NVLINK};
        int forced = local < nvls_arity ? local : nvls_arity;
        if (local > nvls_arity && k->minor < 25)
            sys->nvls = 0;
        search(spi, total, total, forced, forced, 1, &nv.nch, &nv.bw_intra);
        nv.bw_inter = sys->nnodes > 1 ? ring.bw_intra : spi[0];
        sys->graph[CS_NCCL_NVLS] = nv;
        sys->graph[CS_NCCL_NVLS_TREE] = nv;
        /* nvls.cc: 16 channels (SM90; and every GPU in 2.20), 32 on SM100
         * from 2.25, 24 on one SM100 node or NVLink domain from 2.29 */
        sys->nvls_channels = g->cc >= 100 && k->minor >= 25
                                 ? (k->minor >= 29 && sys->nnodes == 1 ? 24 : 32)
                                 : 16;
        /* heads: the NVLS graph's channels, one GPU each (connect.cc), at
         * most NCCL_MAX_NVLS_ARITY of them (search.cc): 32 of an NVL72
         * rack's 72 GPUs reduce from 2.25 */
        sys->nvls_heads = local < nvls_arity ? local : nvls_arity;
        /* enqueue.cc (calcCollChunking): NVLSTree starts from
         * comm->nvlsChunkSize (NCCL_NVLS_CHUNKSIZE, 128 KiB) from 2.21,
         * from a Simple step (4 MiB buffer / 8 steps) before; at most 64
         * KiB from 4 nodes (NCCL_NVLSTREE_MAX_CHUNKSIZE = -2) */
        sys->nvls_tree_chunk = k->minor >= 21 ? 131072 : 524288;
        if (sys->nnodes >= 4)
            sys->nvls_tree_chunk = 65536;
    }
    snprintf(sys->note, sizeof(sys->note),
             "%s %s: %s, %d rank(s) in %d %s(s); ring %d x %.1f GB/s%s", k->lib,
             k->version, g->name, nranks, sys->nnodes,
             nvl_tier < 0 ? "node" : g->rccl ? "xGMI node" : "NVLink domain",
             sys->graph[CS_NCCL_RING].nch, sys->graph[CS_NCCL_RING].bw_intra,
             sys->nvls ? ", NVLS" : "");
    if (sys->nvls)
        snprintf(sys->note + strlen(sys->note), sizeof(sys->note) - strlen(sys->note),
                 " %d x %.1f GB/s", sys->graph[CS_NCCL_NVLS].nch, sys->graph[CS_NCCL_NVLS].bw_intra);
    /* a file whose links name no tier: NCCL's figures are those of PCIe,
     * while the simulation runs its links as written */
    int tagged = 0; /* a class inside a node: NVLink, xGMI, PCIe */
    for (int t = 0; t < plat->ntiers; t++)
        tagged |= cs_sim_hw_class(plat->tiers[t].name) != CS_SIM_HW_NET;
    /* a file's NVLink: NCCL's tuner counts the GPU's own links (NVML's
     * count), not the file's, which the simulation runs */
    if (plat->is_file && tagged && nvl_tier >= 0 && sys->gpu_nvlink > 0)
        snprintf(sys->note + strlen(sys->note), sizeof(sys->note) - strlen(sys->note),
                 "; the tuner counts the %s's own %d NVLinks (%.1f GB/s per GPU), whatever "
                 "the file's links carry", g->name, g->links, sys->gpu_nvlink);
    if (plat->is_file && !tagged && g->links > 0)
        snprintf(sys->note + strlen(sys->note), sizeof(sys->note) - strlen(sys->note),
                 "; no link is tagged as NVLink, xGMI or PCIe (a tier property), so NCCL's "
                 "figures are PCIe's: tag them as docs/platforms.md shows");
    return CS_OK;
}
