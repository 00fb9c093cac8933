/*
 * Engine internals: the snapshot's data structures and the functions the
 * engine's files share. Everything is plain arrays indexed by 32-bit ids;
 * name lookups go through hash maps, but nothing that must be deterministic
 * iterates a hash map: nodes are visited in name order, pods and groups in age
 * order.
 */
#ifndef CORRAL_ENGINE_INT_H
#define CORRAL_ENGINE_INT_H

#include <regex.h>
#include <stdint.h>

#include "corral/arena.h"
#include "corral/engine.h"
#include "corral/hmap.h"

#define NONE UINT32_MAX

/* Resource dimensions. GPU is counted in milli-GPUs (a whole GPU is 1000), so
 * whole and fractional requests add up in queue accounting. */
enum {
    RES_CPU = 0, /* millicores */
    RES_MEM = 1, /* bytes */
    RES_GPU = 2, /* milli-GPUs */
    RES_PODS = 3,
    RES_EPH = 4, /* ephemeral-storage bytes */
    RES_FIXED = 5,
    RES_MAX = 16 /* up to 11 other extended resources: more are refused (intern.c, pods.c) */
};
/* res_fit's miss masks use bits 30 and 31 for other reasons (MISS_*). */
_Static_assert(RES_MAX <= 30, "resource bits fit a miss mask");

typedef struct rvec {
    int64_t v[RES_MAX];
} rvec_t;

#define MAX_GPUS     64
#define GPU_PICK_MAX 8 /* GPU set choices remembered per node: sets of 1..8 */
/* Queue tree levels: a deeper tree (or a loop) is refused (objects.c). */
#define QUEUE_DEPTH_MAX 64
_Static_assert(3 * MAX_GPUS <= CORRAL_GPU_IDS_LEN, "GPU id lists fit a view");

/* --- interned constraints ------------------------------------------------------- */

/* A pod's node constraints, interned: pods of one job share one profile, and
 * static predicate results are cached per (profile, node class). */
typedef struct eprof {
    char *key;             /* canonical form, the interning key (in arena) */
    corral_arena_t *arena; /* everything the profile points to; NULL: free slot */
    uint32_t refs;         /* pods and held shapes using it; freed at 0 */
    corral_kv_t *selector;
    size_t nselector;
    corral_nsel_term_t *required;
    size_t nrequired;
    corral_pref_term_t *preferred;
    size_t npreferred;
    corral_toleration_t *tols;
    size_t ntols;
    bool uses_fields; /* matchFields on metadata.name: evaluate per node */
    bool model_bound; /* selects on nvidia.com/gpu.product */
    int32_t *cache;   /* per node class: 0 unknown, else FIT_* code + 1 */
    size_t ncache;
} eprof_t;

/* Static predicate outcomes, in kube-scheduler's order. */
enum {
    FIT_OK = 0,
    FIT_UNSCHED = 1,
    FIT_AFFINITY = 2,
    FIT_TAINT = 3, /* + index of the untolerated taint in the node class */
};

/* Nodes with equal labels, taints and unschedulable share a class. */
typedef struct ecls {
    char *key;     /* owned; NULL: free slot */
    uint32_t refs; /* nodes of the class; freed at 0 */
} ecls_t;

/* A request class (same profile, request and GPUs): the failure memo's key. */
typedef struct ercls {
    char *key;     /* owned; NULL: free slot */
    uint32_t refs; /* pods of the class; freed at 0 */
} ercls_t;

/* The GPU Feature Discovery label naming a node's GPU model. */
#define MODEL_LABEL "nvidia.com/gpu.product"

/* --- snapshot objects --------------------------------------------------------------- */

/* A workload shape for fragmentation (see frag.c). */
typedef struct eshape {
    int64_t cpu;
    int gpus;
    int milli;         /* per GPU */
    double p;          /* normalised frequency */
    const int *models; /* into the engine's shape_models */
    size_t nmodels;
} eshape_t;

/* A pod shape and how many pods of it the engine holds (frag.c). */
typedef struct wshape {
    char *key; /* owned; NULL: free slot (count 0) */
    int64_t cpu;
    int gpus;
    int milli;
    int64_t count;
    uint32_t prof; /* the pods' profile when it binds them to GPU models, else NONE */
} wshape_t;

typedef struct enode {
    char *name;
    int model; /* interned nvidia.com/gpu.product, -1 when none */
    /* cached fragment of the current state */
    double frag;
    uint64_t frag_epoch;
    bool frag_valid;
    bool alive;
    /* The fragment after placing a few recent shapes, valid while the
     * cached fragment above is (cleared when it is recomputed): every pod
     * scores every node, nodes change one at a time and shapes repeat. */
    struct frag_memo {
        int64_t cpu;
        uint64_t mask;
        int32_t share;
        double after;
    } frag_memo[4];
    uint8_t nfrag_memo, frag_memo_next;
    corral_arena_t *arena;    /* labels, taints, topology, model caches */
    const char *model_caches; /* corral.dev/model-caches, or NULL */
    corral_kv_t *labels;
    size_t nlabels;
    corral_taint_t *taints;
    size_t ntaints;
    bool unschedulable;
    uint32_t cls;
    rvec_t alloc;
    rvec_t used;
    rvec_t nominated; /* requests of pods nominated here, not yet bound */
    int ngpu;
    uint16_t gpu_used[MAX_GPUS]; /* milli per GPU; 1000 = held whole */
    uint64_t whole_mask;         /* GPUs held whole */
    uint64_t share_mask;         /* GPUs holding shares */
    uint64_t nominated_mask;     /* GPUs promised to nominated pods */
    uint16_t *topo;              /* ngpu*ngpu link ranks, NULL = uniform */
    uint32_t *pods;              /* pods bound here */
    size_t npods, cappods;
    uint32_t order; /* position in name order */
    /* GPU set choices depend only on (free GPUs, how many): remembered, since
     * every pod evaluates every node and nodes change one at a time. */
    struct gpu_pick {
        uint64_t free; /* key; 0 = empty slot */
        uint64_t set;
        int32_t worst, nvsum, leftover;
    } picks[GPU_PICK_MAX + 1];
} enode_t;

/* A node's chosen k-GPU set from free, with its scoring facts, remembered
 * for k up to GPU_PICK_MAX (callers asking for more use corral__pick_gpus
 * and corral__set_quality, the same functions uncached). */
const struct gpu_pick *corral__gpu_pick(enode_t *n, uint64_t free, int k);
/* Does the node's corral.dev/model-caches list cache (NULL: no)? */
bool corral__holds_model(const enode_t *n, const char *cache);

/* FOREIGN: pending, but for another scheduler (spec.schedulerName): it exists
 * and is never placed by Corral. GONE: a terminating pod taken off its node
 * for a trial (corral__unbind): it holds nothing, counts for nothing and is
 * not pending; corral__restore puts it back. It never outlives the trial. */
enum { POD_PENDING = 0, POD_BOUND = 1, POD_TERMINATING = 2, POD_FOREIGN = 3, POD_GONE = 4 };
#define POD_PLACED(p) ((p)->state == POD_BOUND || (p)->state == POD_TERMINATING)

typedef struct epod {
    char *ns, *name, *key; /* key: "ns/name" */
    bool alive;
    uint8_t state;
    uint32_t group;
    uint32_t prof;
    char *pc_name;
    char *model_cache; /* corral.dev/model-cache (the LocalModelCache it wants), or NULL */
    corral_opt_i32_t spec_priority;
    int32_t priority; /* resolved at cycle start */
    rvec_t req;
    uint16_t gpus;  /* whole GPUs */
    uint16_t share; /* milli-GPU share of one GPU, 0 when none */
    uint32_t node;
    uint64_t gpu_mask;
    int64_t start_ns;
    int64_t est_ns;     /* runtime estimate, -1 when unknown */
    int64_t min_run_ns; /* protected from eviction this long after start */
    uint64_t age;
    uint32_t nom_node; /* nominated node or NONE */
    uint64_t nom_mask;
    uint32_t held_nom_node; /* nomination suspended by a tentative bind */
    uint64_t held_nom_mask;
    uint32_t wshape;     /* index into the engine's wshapes */
    uint32_t rcls;       /* request class: same profile, request and GPUs (interned) */
    const char *reason;  /* pending reason, interned (report.c); NULL until tried */
    bool reason_changed; /* in the engine's changed list */
} epod_t;

typedef struct egroup {
    char *ns, *name, *key;
    bool alive;
    bool implicit; /* a pod without a group: a gang of one */
    bool declared; /* a PodGroup object exists (or implicit) */
    int32_t min_member;
    rvec_t min_res;
    bool has_min_res;
    char *queue_name;
    char *pc_name;
    int topo_mode; /* 0 none, 1 hard, 2 soft */
    int32_t topo_tier;
    uint64_t age;
    uint32_t *pods;
    size_t npods, cappods;
    /* per cycle */
    uint32_t queue;
    int32_t priority;
    const char *block; /* why the whole group is held back (interned) */
    /* reporting (report.c) */
    bool touched;         /* in the engine's touched list */
    bool fresh;           /* in the engine's fresh list (new pods since the last cycle) */
    uint32_t listed_q;    /* the queue whose job list holds it, or NONE */
    bool adding;          /* being added to a list (dedup) */
    uint32_t nbound;      /* its pods bound now */
    uint32_t npend;       /* its pods in state POD_PENDING (corral__pod_state) */
    uint32_t run_idx;     /* its place in the engine's running list while nbound > 0 */
    uint64_t queue_ver;   /* queue resolved against this version of the queues */
    const char *st_phase; /* phase and message last reported */
    const char *st_msg;
} egroup_t;

typedef struct equeue {
    char *name;
    bool alive;
    bool implicit;
    int32_t weight;
    rvec_t cap, deserved, guarantee;
    uint32_t cap_mask, des_mask, gua_mask; /* bit d: dimension d is set */
    bool reclaimable;
    bool closed; /* status.state Closed or Closing: starts no new pod (ruling 7) */
    char *parent_name;
    int32_t prio;
    /* per cycle */
    uint32_t parent;
    bool leaf;
    rvec_t alloc;   /* running pods of this queue and its descendants */
    rvec_t demand;  /* alloc + pending requests, subtree */
    rvec_t des_eff; /* computed entitlement */
    uint32_t depth;
    int32_t min_run_prio; /* lowest priority among its running pods */
    double share_c;       /* share, valid unless share_dirty */
    bool share_dirty;
    bool capped;      /* it or an ancestor has a capability (resolve_tree) */
    bool reclaim_eff; /* it and every ancestor are reclaimable (ruling 3) */
    /* Its effective guarantee: the larger of its own and the sum of its
     * children's (ruling 4), and the dimensions it covers (resolve_tree). */
    rvec_t gua_eff;
    uint32_t gua_eff_mask;
    /* fair share (fairshare.c): decayed allocation x ns, subtree, and the
     * allocation at the end of the last cycle (held until the next) */
    double fs_use[RES_MAX];
    rvec_t fs_held;
    /* its waiting jobs by priority then age (order.c) */
    uint32_t *jobs;
    size_t njobs, capjobs;
    size_t head;  /* entries before it are gone for good */
    size_t stale; /* entries after it seen gone (filtered when many) */
} equeue_t;

typedef struct ehn_member {
    int type; /* CORRAL_HN_NODE or CORRAL_HN_HYPERNODE */
    char *exact;
    bool has_regex;
    regex_t re;
    corral_selector_t labels; /* in the hypernode's arena */
    bool has_labels;
} ehn_member_t;

typedef struct ehn {
    char *name;
    bool alive;
    corral_arena_t *arena;
    int32_t tier;
    ehn_member_t *members;
    size_t nmembers;
    /* resolved when dirty */
    uint32_t *nodes;
    size_t nnodes;
    uint64_t *bits; /* node membership bitmap by node id */
} ehn_t;

/* --- the engine ------------------------------------------------------------------------ */

#define VEC(T)                                                                                     \
    struct {                                                                                       \
        T *items;                                                                                  \
        size_t n, cap;                                                                             \
    }

typedef struct tentative {
    uint32_t pod;
} tentative_t;

/* The first blocked job's reservation (backfill). */
typedef struct reservation {
    bool active;
    uint32_t group;
    int64_t t_ns;
    /* per node: GPUs and cpu/memory promised to the reserved job */
    uint32_t *nodes;
    uint64_t *masks;
    rvec_t *res;
    size_t n;
} reservation_t;

/* A remembered failure to place a one-pod job (cycle.c). */
typedef struct memo {
    uint64_t version;
    uint32_t rcls, queue;
    int resv;     /* placement: 0/1 held to the reservation; eviction: 2 preempt, 3 reclaim */
    int32_t prio; /* preempt: the job's priority */
    uint32_t resv_group;
    int r;
    const char *why; /* interned */
} memo_t;
#define MEMO_SLOTS 1024

/* Nodes and GPUs (nodes.c, bind.c, gpu.c): the nodes, their name order, node classes and the
 * free-GPU histogram; order_dirty and nodes_ver are its invalidation. */
typedef struct eng_nodes {
    VEC(enode_t) nodes;
    corral_hmap_t node_by_name;
    uint32_t *node_order; /* node ids sorted by name (alive only) */
    size_t nnode_order;
    bool order_dirty;
    VEC(ecls_t) classes;
    corral_hmap_t cls_by_key;
    VEC(uint32_t) cls_free;
    VEC(uint32_t) node_free;            /* slots of removed nodes */
    int64_t max_node_cpu, max_node_gpu; /* largest node specs (bestfit scaling) */
    /* Nodes by how many whole GPUs they have free: pods asking for more
     * than any node has fail without a scan (common when the cluster is full). */
    uint32_t free_hist[MAX_GPUS + 1];
    uint64_t nodes_ver; /* bumped when a node comes, goes or changes */
    rvec_t total_alloc, total_used;
    uint32_t nodes_alive;
} eng_nodes_t;

/* Pods and groups (pods.c, groups.c, intern.c, order.c): pods, pod groups, priority classes, the
 * interned pod constraints and request classes, and what changed since the last cycle. */
typedef struct eng_pods {
    /* The spec.schedulerName values that are ours ("" for none given), set by
     * the caller (corral_engine_set_schedulers); scheds_set false: all pods. */
    VEC(char *) scheds;
    bool scheds_set;
    VEC(epod_t) pods;
    corral_hmap_t pod_by_key;
    VEC(uint32_t) pod_free;
    VEC(egroup_t) groups;
    corral_hmap_t group_by_key;
    VEC(uint32_t) group_free;
    VEC(uint32_t) group_dead; /* freed slots the job lists may still name (order.c) */
    VEC(int32_t) pc_values;
    VEC(char *) pc_names; /* owned keys of pc_by_name; NULL: free slot */
    VEC(uint32_t) pc_free;
    corral_hmap_t pc_by_name;
    bool pc_dirty;
    /* Interned tables, reference counted: a slot is freed (and its id
     * reused) when nothing uses it, so a scheduler running for months holds
     * only what its current objects need (corral_engine_mem). */
    VEC(eprof_t) profs;
    corral_hmap_t prof_by_key;
    VEC(uint32_t) prof_free;
    int64_t npending;      /* pods pending (ours or another scheduler's) */
    VEC(uint32_t) running; /* groups with bound pods (victims are among them) */
    corral_hmap_t rcls_by_key;
    VEC(ercls_t) rclss;
    VEC(uint32_t) rcls_free;
    bool prio_changed;        /* a job's priority changed: re-sort the job lists */
    VEC(uint32_t) fresh;      /* groups with new pending pods */
    VEC(uint32_t) fresh_pods; /* the new pending pods */
    VEC(uint32_t) unlisted;   /* groups with new pods, to add to the job lists */
    uint64_t age_seq;
} eng_pods_t;

/* Queues and shares (queues.c, fairshare.c): the queue tree, accounting versions and the fair-share
 * clock. */
typedef struct eng_queues {
    VEC(equeue_t) queues;
    corral_hmap_t queue_by_name;
    /* The queue tree's children (resolve_tree): kid_ids[kid_first[q] ..
     * kid_first[q + 1]) are q's children, in id order; index queues.n
     * stands for the root (top-level queues). */
    uint32_t *kid_first, *kid_ids;
    uint64_t over_version; /* reclaim: queues over their share, as of this version */
    uint32_t over_count, over_one;
    bool any_guarantee; /* some queue has a guarantee (resolve_tree) */
    uint64_t queue_ver; /* bumped when queues come, go or change */
    uint64_t tally_ver; /* queue_ver of the last count from scratch */
    /* fair share (fairshare.c): the now of the last cycle counted, and the
     * decayed length of the time counted (ns): usage / window = average */
    bool fs_on;
    int64_t fs_last;
    double fs_window;
} eng_queues_t;

/* Placement memo (cycle.c, place.c): remembered failures and pending reasons, valid for one state
 * version. */
typedef struct eng_memo {
    corral_hmap_t reason_cache; /* "prof|req" -> index into reason_vals */
    VEC(const char *) reason_vals;
    uint64_t reason_version;
    memo_t slots[MEMO_SLOTS];
} eng_memo_t;

/* Fragmentation (frag.c, score.c): the workload fragmentation is measured against, the held pod
 * shapes it is derived from, model pressure and share gaps. */
typedef struct eng_frag {
    /* fragmentation workload (frag.c) */
    eshape_t *shapes;
    size_t nshapes;
    int *shape_models; /* every shape's GPU models, one block */
    size_t nshape_models;
    bool workload_set;
    uint64_t frag_epoch;
    /* Share pods' frequency among the workload's GPU pods, permille: set
     * with the workload (once per epoch), read by the corral score. */
    int share_permille;
    uint64_t pods_version;
    /* Shapes of the pods held, counted as pods come and go: the workload
     * derived from them is rebuilt once 1% of it has changed. */
    VEC(wshape_t) wshapes;
    corral_hmap_t wshape_by_key;
    VEC(uint32_t) wshape_free;
    int64_t wshape_total, wshape_churn, wshape_base;
    bool derived;
    corral_hmap_t model_ids;
    /* How much the workload's model-bound pods want each GPU model, in
     * tenths (frag.c); recomputed when the workload or the nodes change. */
    int32_t *pressure; /* by model id */
    size_t npressure;
    uint64_t pressure_epoch, pressure_nodes;
    /* GPUs partly used by shares, by gap (milli left / 10): for the
     * sum-of-squares share packing rule (score.c). */
    int32_t gaps[101];
} eng_frag_t;

/* Reservations (backfill.c): the first blocked job's backfill reservation and whether it still
 * stands. */
typedef struct eng_resv {
    uint32_t blocked; /* the first job the last cycle could not place */
    uint32_t for_job; /* e->rv.cur (active or not) is the outcome for this job; NONE */
    bool found;       /* and it found a reservation */
    reservation_t cur;
} eng_resv_t;

/* HyperNodes (hypernode.c, objects.c). */
typedef struct eng_hypernodes {
    VEC(ehn_t) hns;
    corral_hmap_t hn_by_name;
    bool hn_dirty;
} eng_hypernodes_t;

/* Reasons and reports (report.c): interned pending reasons and what the next report covers. */
typedef struct eng_report {
    /* Interned pending reasons, and what the next report covers (report.c). */
    corral_arena_t rsn_arena;
    corral_hmap_t rsn_by_text;
    VEC(char *) rsn_texts;
    const char *rsn_last;  /* the last text interned */
    VEC(uint32_t) changed; /* pods whose reason changed */
    VEC(uint32_t) touched; /* groups whose status may have changed */
} eng_report_t;

/* The cycle (cycle.c): quiet-cycle bookkeeping, the open transaction and the decisions being built.
 */
typedef struct eng_cycle {
    /* Quiet cycles (cycle.c): epoch counts every change except new pending
     * pods, which are listed instead; a cycle is quiet when the epoch has
     * not moved since the last one began. */
    uint64_t epoch, cycle_epoch;
    uint64_t cycles;
    int64_t next_timer; /* first time an eviction protection runs out */
    /* per cycle */
    corral_arena_t cyc;
    VEC(corral_bind_t) binds;
    VEC(corral_evict_t) evicts;
    VEC(corral_pending_t) pendings;
    VEC(corral_group_status_t) gstats;
    corral_decisions_t dec;
    VEC(uint32_t) txn;     /* pods bound tentatively in the open transaction */
    VEC(uint64_t) txn_ver; /* the version before each of those binds */
} eng_cycle_t;

/* The engine: its configuration, what every part shares (resource names,
 * the state's version, the clock of the cycle), and one struct per
 * subsystem, each owning its tables, caches and their invalidation. */
struct corral_engine {
    corral_sched_config_t cfg;
    corral_arena_t keep; /* resource and GPU model names: bounded, engine lifetime */
    const char *res_names[RES_MAX];
    int nres;
    /* The state's identity: a new number from vseq on every change, and the
     * old one back when a transaction is rolled back (the state is then the
     * same again), so caches keyed by it stay valid across trial placements. */
    uint64_t version, vseq;
    char one_ids[CORRAL_GPU_IDS_LEN]; /* gpu ids of the last corral_engine_place_one */
    uint64_t rng;
    int64_t now;
    bool dry; /* trial placements: write no pending reasons */

    eng_nodes_t nd;  /* nodes and GPUs */
    eng_pods_t pd;   /* pods, groups, priority classes, interned constraints */
    eng_queues_t qs; /* queues and shares */
    eng_memo_t pm;   /* placement memo and cached reasons */
    eng_frag_t fr;   /* fragmentation workload */
    eng_resv_t rv;   /* the backfill reservation */
    eng_hypernodes_t hn;
    eng_report_t rp; /* pending reasons and what the next report covers */
    eng_cycle_t cy;  /* the cycle being run */
};

#define VEC_PUSH(v, x)                                                                             \
    do {                                                                                           \
        corral_grow((void **)&(v).items, &(v).cap, (v).n + 1, sizeof(*(v).items));                 \
        (v).items[(v).n++] = (x);                                                                  \
    } while (0)

/* Every change of a pod's state goes through here: its group counts its
 * pending pods (the job lists ask "does it still wait?" for every job of
 * every cycle). */
static inline void corral__pod_state(corral_engine_t *e, epod_t *p, uint8_t state)
{
    if (p->state == state)
        return;
    if (p->group < e->pd.groups.n) {
        egroup_t *g = &e->pd.groups.items[p->group];
        g->npend += (state == POD_PENDING) - (p->state == POD_PENDING);
    }
    p->state = state;
}

/* --- rvec helpers ---------------------------------------------------------------------------- */

static inline void rv_add(rvec_t *a, const rvec_t *b, int n)
{
    for (int i = 0; i < n; i++)
        a->v[i] += b->v[i];
}

static inline void rv_sub(rvec_t *a, const rvec_t *b, int n)
{
    for (int i = 0; i < n; i++)
        a->v[i] -= b->v[i];
}

/* --- shared functions ------------------------------------------------------------------------ */

/* The snapshot (snapshot.c and the files beside it: nodes.c for free GPUs
 * and the name order, intern.c for resources and profiles, bind.c, objects.c
 * for queues). */
int corral__free_whole(const enode_t *n);
void corral__gap(corral_engine_t *e, int used, int sign);
void corral__hist(corral_engine_t *e, const enode_t *n, int sign);
int corral__max_free_whole(const corral_engine_t *e);
int corral__res_index(corral_engine_t *e, const char *name);
void corral__node_order(corral_engine_t *e);
void corral__bind(corral_engine_t *e, uint32_t pid, uint32_t nid, uint64_t mask);
/* Promise node nid (GPUs mask) to pending pod pid; it counts as its queue's. */
void corral__nominate(corral_engine_t *e, uint32_t pid, uint32_t nid, uint64_t mask);
/* Take a placed pod off its node: a bound pod becomes pending, a terminating
 * one GONE. Trials undo it with corral__restore. */
void corral__unbind(corral_engine_t *e, uint32_t pid);
/* Put a pod taken off by corral__unbind back as it was: on node nid (GPUs
 * mask), started at start_ns, in state (POD_BOUND or POD_TERMINATING). */
void corral__restore(corral_engine_t *e, uint32_t pid, uint32_t nid, uint64_t mask,
                     int64_t start_ns, uint8_t state);
/* An evicted pod: it keeps its node until the caller removes it, and no
 * longer counts for its queue. */
void corral__terminate(corral_engine_t *e, uint32_t pid);
void corral__gpu_ids_str(uint64_t mask, char *out, size_t len);
uint64_t corral__rand(corral_engine_t *e);
/* Profile references (held shapes keep their profile). */
void corral__prof_ref(corral_engine_t *e, uint32_t id);
void corral__prof_unref(corral_engine_t *e, uint32_t id);

uint32_t corral__queue_get(corral_engine_t *e, const char *name);

/* Between the snapshot's files. */
/* intern.c: a resource list as an rvec_t (GPUs in milli-GPUs); returns the
 * first resource it could not track, said with corral__res_beyond. */
const char *corral__to_rvec(corral_engine_t *e, const corral_reslist_t *l, rvec_t *out,
                            uint32_t *mask);
void corral__res_beyond(const corral_engine_t *e, const corral_obj_t *o, corral_diag_t *diag,
                        int sev, const char *res, const char *consequence);
void corral__cls_unref(corral_engine_t *e, uint32_t id);
uint32_t corral__node_class(corral_engine_t *e, uint32_t nid);
void corral__copy_sel(corral_arena_t *a, corral_selector_t *dst, const corral_selector_t *src);
uint32_t corral__intern_prof(corral_engine_t *e, const corral_pod_spec_t *sp);
void corral__set_str(char **dst, const char *src);
uint32_t corral__intern_rcls(corral_engine_t *e, const epod_t *p);
void corral__rcls_unref(corral_engine_t *e, uint32_t id);
/* nodes.c, pods.c, groups.c, objects.c: upsert one object of their kind. */
int corral__upsert_node(corral_engine_t *e, const corral_obj_t *o, corral_diag_t *diag);
/* bind.c: a pod's nomination dropped (it no longer counts on that node). */
void corral__nominate_clear(corral_engine_t *e, epod_t *p);
int corral__upsert_pod(corral_engine_t *e, const corral_obj_t *o, int64_t now, corral_diag_t *diag);
/* groups.c: a group by ns/name (created, implicit or not, if new). */
uint32_t corral__group_get(corral_engine_t *e, const char *ns, const char *name, bool implicit);
void corral__group_reap(corral_engine_t *e, uint32_t gid);
/* A pod joins or leaves group g; pending: its state is POD_PENDING. */
void corral__group_add_pod(egroup_t *g, uint32_t pid, bool pending);
void corral__group_del_pod(egroup_t *g, uint32_t pid, bool pending);
int corral__upsert_podgroup(corral_engine_t *e, const corral_obj_t *o, corral_diag_t *diag);
int corral__upsert_queue(corral_engine_t *e, const corral_obj_t *o, corral_diag_t *diag);
int corral__upsert_pc(corral_engine_t *e, const corral_obj_t *o);
int corral__upsert_hn(corral_engine_t *e, const corral_obj_t *o, corral_diag_t *diag);
/* snapshot.c: free what an object owns (its slot is then empty). */
void corral__free_pod(epod_t *p);
void corral__free_group(egroup_t *g);
void corral__free_hn(ehn_t *h);

/* predicates.c */
int corral__static_fit(corral_engine_t *e, const epod_t *p, const enode_t *n);
bool corral__tolerates(const eprof_t *prof, const corral_taint_t *t);
int corral__prefer_score(const eprof_t *prof, const enode_t *n);
/* Resource fit of pod p on node n: returns a bitmask of RES_* that are
 * insufficient (bit 31: GPU share), 0 when it fits. Chooses GPUs into *mask. */
uint32_t corral__res_fit(corral_engine_t *e, const epod_t *p, const enode_t *n, uint64_t *mask);
/* The same, optionally treating the backfill reservation as taken. */
uint32_t corral__res_fit_x(corral_engine_t *e, const epod_t *p, const enode_t *n, bool use_resv,
                           uint64_t *mask);
#define MISS_GPU_SHARE (1u << 31)
#define MISS_RESERVED  (1u << 30) /* GPUs reserved for another queue */

/* score.c: the policies as a table of functions (corral_policy_t order):
 * how each scores a node, and what it needs prepared. */
typedef struct policy_ops {
    const char *name; /* as in SchedulerConfiguration and --policy */
    void (*score)(corral_engine_t *e, const epod_t *p, enode_t *n, uint64_t *mask, int64_t k[5]);
    bool workload; /* measures fragmentation: derive the workload before placing */
} policy_ops_t;
/* The entry for a policy number (NULL: none), and the engine's policy. */
const policy_ops_t *corral__policy_ops(int policy);
const policy_ops_t *corral__policy(const corral_engine_t *e);
/* k[0..4], compared lexicographically, higher wins */
void corral__score(corral_engine_t *e, const epod_t *p, enode_t *n, uint64_t *mask, int64_t k[5]);
int corral__score_cmp(const int64_t *a, const int64_t *b);

/* frag.c */
int corral__node_model(corral_engine_t *e, const enode_t *n);
double corral__frag_state(const corral_engine_t *e, int model, int64_t cpu_left,
                          const uint16_t *left, int ngpu);
double corral__node_frag(corral_engine_t *e, enode_t *n);
/* How much the workload's model-bound pods want GPU model `model`: their
 * demand share over the model's capacity share, in tenths (0: not at all). */
int corral__model_pressure(corral_engine_t *e, int model);
double corral__frag_after(corral_engine_t *e, enode_t *n, const epod_t *p, uint64_t mask);
void corral__derive_workload(corral_engine_t *e);
/* Count pod p in (sign 1) or out of (-1) the held shapes. */
void corral__wshape_count(corral_engine_t *e, epod_t *p, int sign);

/* gpu.c */
uint64_t corral__pick_gpus(const enode_t *n, uint64_t free, int k);
int corral__pick_share(const enode_t *n, uint16_t share);
int corral__set_quality(const enode_t *n, uint64_t set, int *nvsum);

/* queues.c */
/* Count queue accounting from scratch if the queues changed (true if so). */
bool corral__queues_recount(corral_engine_t *e);
/* Totals and entitlements for a cycle, from the kept accounting. */
void corral__queues_prepare(corral_engine_t *e);
/* What pod p counts for in its queue's (and ancestors') demand and
 * allocation, added (sign 1) or taken away (-1): every change to a pod's
 * state, nomination or queue is wrapped in a pair of these. Terminating (and
 * GONE) pods are leaving and count for nothing; nominated pods are as good as
 * placed. */
void corral__contrib(corral_engine_t *e, const epod_t *p, int sign);
/* The queue of g (NONE: it does not exist), cached until the queues change. */
uint32_t corral__queue_of(corral_engine_t *e, egroup_t *g);
const char *corral__capability_block(corral_engine_t *e, uint32_t q, const rvec_t *req);
bool corral__guarantee_ok(corral_engine_t *e, uint32_t q, const rvec_t *req);
double corral__queue_share(const corral_engine_t *e, uint32_t q);
/* The same, remembered until the queue's allocation changes. */
double corral__share_cached(corral_engine_t *e, uint32_t q);
/* Count queue accounting from scratch; CORRAL_EINVAL (and why, in msg) when
 * it differs from what was kept. */
int corral__tally_check(corral_engine_t *e, char *msg, size_t len);
int corral__queue_cmp(corral_engine_t *e, uint32_t a, uint32_t b);

/* place.c */
typedef struct place_ctx {
    bool use_resv;           /* honour the backfill reservation */
    const uint64_t *hn_bits; /* restrict to this HyperNode's nodes, or NULL */
} place_ctx_t;

/* Outcome of trying to place a job. */
enum { PLACE_OK = 0, PLACE_FAIL = 1, PLACE_CAPABILITY = 2, PLACE_TOPOLOGY = 3, PLACE_NOPODS = 4 };

uint32_t corral__best_node(corral_engine_t *e, uint32_t pid, const place_ctx_t *pc, uint64_t *mask);
/* Try to place job gid (its gang, then the rest one by one). On success the
 * binds stay (recorded as decisions when record is true); on failure nothing
 * changes and *why says why (cycle arena). */
int corral__place_job(corral_engine_t *e, uint32_t gid, bool use_resv, bool record,
                      const char **why);
size_t corral__txn_mark(corral_engine_t *e);
void corral__txn_bind(corral_engine_t *e, uint32_t pid, uint32_t nid, uint64_t mask);
void corral__txn_rollback(corral_engine_t *e, size_t mark);
void corral__txn_record(corral_engine_t *e, size_t mark);
const char *corral__nodes_reason(corral_engine_t *e, uint32_t pid, const place_ctx_t *pc);
/* Pending pods of a group, sorted by priority then age. Caller frees. */
uint32_t *corral__group_pending(corral_engine_t *e, uint32_t gid, size_t *n, size_t *running);

/* backfill.c */
void corral__reserve(corral_engine_t *e, uint32_t gid);
void corral__resv_clear(corral_engine_t *e);

/* preempt.c */
void corral__victim_prep(corral_engine_t *e);
/* Evict for job gid (across: reclaim from other queues). NONE: no search
 * was needed (no victim can exist); FAILED: searched, no set of victims
 * makes room; DONE: victims evicted, the job nominated. */
enum { PREEMPT_NONE = 0, PREEMPT_FAILED = 1, PREEMPT_DONE = 2 };
int corral__preempt(corral_engine_t *e, uint32_t gid, bool across);

/* order.c */
/* One queue's jobs for a cycle to try, in order: a window on the queue's
 * persistent list (list set; entries checked as they come up), or an array
 * of its own (list NULL; checked already). */
typedef struct qjobs {
    const uint32_t *jobs;
    size_t n, next;
    uint32_t queue;
    equeue_t *list;
    size_t ready; /* next + 1 when jobs[next] has been checked */
} qjobs_t;
/* Per queue, the jobs a cycle tries: all waiting jobs (all: look at every
 * group, as after the queues changed; resort: a priority changed), or only
 * those among ids. Jobs that may not run get their reason. */
qjobs_t *corral__jobs_all(corral_engine_t *e, bool all, bool resort);
qjobs_t *corral__jobs_of(corral_engine_t *e, const uint32_t *ids, size_t n);
void corral__jobs_free(corral_engine_t *e, qjobs_t *qj);
/* The queue whose next job comes first (NONE: no job left), and a queue's
 * next job (NONE when none is left). */
uint32_t corral__next_queue(corral_engine_t *e, qjobs_t *qj);
uint32_t corral__peek(corral_engine_t *e, qjobs_t *qj);
bool corral__has_pending(const corral_engine_t *e, const egroup_t *g);
void corral__group_reason(corral_engine_t *e, const egroup_t *g, const char *why);

/* report.c */
const char *corral__intern(corral_engine_t *e, const char *s);
/* Set pod pid's pending reason (interned); a change is reported. No-op in dry runs. */
void corral__set_reason(corral_engine_t *e, uint32_t pid, const char *why);
void corral__touch(corral_engine_t *e, uint32_t gid);
void corral__reasons_trim(corral_engine_t *e);
void corral__report(corral_engine_t *e);

/* fairshare.c */
/* Count the allocation held since the last cycle into every queue's decayed
 * usage, up to now (cycle start); resets everything when fair share is off. */
void corral__fs_advance(corral_engine_t *e, int64_t now);
/* Remember every queue's allocation as the cycle leaves it (cycle end). */
void corral__fs_hold(corral_engine_t *e);
/* Queue q's average allocation in dimension d over the decayed past (its
 * unit: milli-GPUs, millicores, bytes), rounded; 0 when off. */
int64_t corral__fs_average(const corral_engine_t *e, uint32_t q, int d);
/* The order-of-service key of q with fair share on (lower first). */
double corral__fs_key(const corral_engine_t *e, uint32_t q);

/* hypernode.c */
void corral__hn_resolve(corral_engine_t *e);

#endif
