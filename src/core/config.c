/*
  config.c - the YAML run description as a tree of DemNode handles (libyaml).

  DemConfigLoad() parses one file with libyaml's loader (yaml_parser_load) into a
  yaml_document_t and checks the whole tree once: the root is a mapping, there is exactly one
  document, every mapping key is a plain value and unique, aliases do not form cycles, nesting
  stays below DEM_YAML_MAX_DEPTH. Handles to nodes are created lazily, cached by position and
  owned by the root handle: DemConfigDestroy() frees them all, and they stay valid until then.

  Paths: a mapping child is "parent.key" ("key" under the root), a sequence item "parent[i]".
  Errors: every user-facing failure is formatted as "FILE:LINE:COL: PATH: message" (1-based
  libyaml marks; PATH omitted for the root), stored for DemLastError() and raised as
  PETSC_ERR_USER_INPUT. Messages name what was expected and what was found. Key errors
  (unknown, duplicate) point at the key and name the mapping's path; "missing required key"
  points at the mapping. Getters treat a NULL mapping as one without the key, so optional
  sections need no test: DemNodeGet(root, "search", &s) then DemNodeGetReal(s, "skin", ...).

  Scalars: reals use strtod on the whole scalar and must be finite ("1.0e-6", "5e7", "3").
  Integers use strtol on the whole scalar; a real with an integral value in range is accepted
  too ("1e3" is 1000, "1.5" is refused). Booleans are true/false, yes/no, on/off in any case.

  --set (DemConfigSet): "a.b.c=value" walks a dotted path from the root; a numeric component
  indexes a sequence. An existing node (scalar or collection) is replaced in place, so every
  handle and every alias sees the new value; a missing key is added, and missing intermediate
  mappings are created. A value starting with '[', '{' or a quote is parsed as YAML (flow
  collections, quoted scalars); anything else is taken verbatim as a plain scalar. Nodes from
  --set report "--set a.b.c" as their location (DemNodeLocation gives line 0, col 0).
*/
#include "dem.h"
#include <yaml.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>

#define DEM_MSG_LEN         4096
#define DEM_YAML_MAX_DEPTH  256
#define DEM_DESCRIBE_MAX    60

typedef struct {
  char *assign_path; /* the dotted path as typed, e.g. "bodies.0.shape" */
  char *node_path;   /* the path of the node it set, e.g. "bodies[0].shape" */
} DemConfigSetRecord;

typedef struct {
  yaml_document_t     doc;
  char               *file;
  DemNode            *all; /* every handle, freed by DemConfigDestroy */
  PetscInt            nall, maxall;
  int                *origin; /* per node id - 1: 0 from the file, k > 0 from sets[k - 1] */
  PetscInt            norigin;
  DemConfigSetRecord *sets;
  PetscInt            nsets, maxsets;
} DemConfig;

struct _DemNode {
  DemConfig *cfg;
  DemNode    parent; /* NULL for the root */
  int        id;     /* libyaml node id (1-based); 0 for an empty document */
  char      *path;
  DemNode   *child; /* cached child handles by position */
  PetscInt   nchild;
};

/* a file or a --set value being parsed; released on every exit */
typedef struct {
  const char     *file;   /* file name, or NULL for a --set value */
  const char     *assign; /* the --set assignment when file is NULL */
  const char     *text;   /* the --set value being parsed */
  FILE           *fp;
  yaml_parser_t   parser;
  PetscBool       parser_ready;
  yaml_document_t doc, extra;
  PetscBool       doc_ready, extra_ready;
} DemYamlInput;

/* what the structural check of a document reports to */
typedef struct {
  yaml_document_t *doc;
  char            *state;  /* per node id: 0 unseen, 1 on the current path, 2 done */
  DemConfig       *cfg;    /* file: messages carry file:line:col */
  const char      *assign; /* --set value: messages name the assignment */
  PetscBool        bad;
} DemYamlCheckCtx;

static char dem_last_error[DEM_MSG_LEN];

static PetscErrorCode DemYamlExplain(DemYamlInput *, PetscErrorCode *);

/* Turns a failed libyaml call (it returns 0) into a PETSc error carrying libyaml's message.
   With an input, the message is the parser's and the input is released first; with NULL, a
   document edit failed, which libyaml reports only for lack of memory or invalid UTF-8. */
#define DemCallYAML(in, call) \
  do { \
    if (PetscUnlikely(!(call))) { \
      PetscErrorCode cls_yaml_; \
      PetscCall(DemYamlExplain((in), &cls_yaml_)); \
      SETERRQ(PETSC_COMM_SELF, cls_yaml_, "%s", dem_last_error); \
    } \
  } while (0)

/* a --set assignment is refused: the message names the assignment */
#define DemSetCheck(cond, assign, fmt, ...) \
  do { \
    if (PetscUnlikely(!(cond))) { \
      DemSetLastError("--set '%s': " fmt, (assign), ##__VA_ARGS__); \
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s", dem_last_error); \
    } \
  } while (0)

const char *DemLastError(void)
{
  PetscFunctionBegin;
  PetscFunctionReturn(dem_last_error);
}

void DemSetLastError(const char fmt[], ...)
{
  char    buf[DEM_MSG_LEN];
  va_list ap;

  PetscFunctionBegin;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap); /* via buf: the arguments may point into dem_last_error */
  va_end(ap);
  memcpy(dem_last_error, buf, sizeof(buf));
  PetscFunctionReturnVoid();
}

static inline yaml_node_t *DemNodeYaml(DemNode node)
{
  return node->id ? yaml_document_get_node(&node->cfg->doc, node->id) : NULL;
}

static inline PetscInt DemYamlNodeCount(yaml_document_t *doc)
{
  return (PetscInt)(doc->nodes.top - doc->nodes.start);
}

static inline PetscInt DemYamlLength(const yaml_node_t *n)
{
  if (n->type == YAML_SEQUENCE_NODE) return (PetscInt)(n->data.sequence.items.top - n->data.sequence.items.start);
  if (n->type == YAML_MAPPING_NODE) return (PetscInt)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
  return 0;
}

/* a short description of what a node holds, for "got ..." in messages */
static PetscErrorCode DemYamlDescribe(const yaml_node_t *n, char buf[], size_t len)
{
  PetscFunctionBegin;
  if (!n) PetscCall(PetscSNPrintf(buf, len, "nothing"));
  else if (n->type == YAML_SCALAR_NODE) {
    size_t l = n->data.scalar.length;
    if (l > DEM_DESCRIBE_MAX) PetscCall(PetscSNPrintf(buf, len, "'%.*s...'", DEM_DESCRIBE_MAX, (const char *)n->data.scalar.value));
    else PetscCall(PetscSNPrintf(buf, len, "'%s'", (const char *)n->data.scalar.value));
  } else if (n->type == YAML_SEQUENCE_NODE) {
    PetscInt k = DemYamlLength(n);
    PetscCall(PetscSNPrintf(buf, len, "a list of %" PetscInt_FMT " item%s", k, k == 1 ? "" : "s"));
  } else PetscCall(PetscSNPrintf(buf, len, "a mapping"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline int DemConfigOrigin(DemConfig *cfg, int id)
{
  return (id > 0 && id <= cfg->norigin) ? cfg->origin[id - 1] : 0;
}

/* formats "LOCATION: PATH: message" into the last error; the location of node `id` is
   file:line:col, or "--set a.b" for nodes from --set (PATH then only if it differs) */
static PetscErrorCode DemConfigFormatV(DemConfig *cfg, int id, const char *path, const char fmt[], va_list ap)
{
  char        msg[DEM_MSG_LEN], loc[DEM_MSG_LEN];
  int         origin = DemConfigOrigin(cfg, id);
  yaml_node_t *n     = id ? yaml_document_get_node(&cfg->doc, id) : NULL;
  PetscBool   showpath = (path && path[0]) ? PETSC_TRUE : PETSC_FALSE;

  PetscFunctionBegin;
  vsnprintf(msg, sizeof(msg), fmt, ap);
  if (origin) {
    DemConfigSetRecord *rec = &cfg->sets[origin - 1];

    PetscCall(PetscSNPrintf(loc, sizeof(loc), "--set %s", rec->assign_path));
    if (showpath && !strcmp(path, rec->node_path)) showpath = PETSC_FALSE;
  } else if (n) {
    PetscCall(PetscSNPrintf(loc, sizeof(loc), "%s:%d:%d", cfg->file, (int)n->start_mark.line + 1, (int)n->start_mark.column + 1));
  } else PetscCall(PetscSNPrintf(loc, sizeof(loc), "%s:1:1", cfg->file));
  if (showpath) DemSetLastError("%s: %s: %s", loc, path, msg);
  else DemSetLastError("%s: %s", loc, msg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeError(DemNode node, const char fmt[], ...)
{
  va_list ap;

  PetscFunctionBegin;
  va_start(ap, fmt);
  if (node) PetscCall(DemConfigFormatV(node->cfg, node->id, node->path, fmt, ap));
  else {
    char msg[DEM_MSG_LEN]; /* the arguments may point into dem_last_error */

    vsnprintf(msg, sizeof(msg), fmt, ap);
    DemSetLastError("%s", msg);
  }
  va_end(ap);
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s", dem_last_error);
}

/* an error located at a mapping key (unknown, duplicate): the mapping's path, the key's mark */
static PetscErrorCode DemNodeKeyError(DemNode map, int keyid, const char fmt[], ...)
{
  va_list ap;

  PetscFunctionBegin;
  va_start(ap, fmt);
  PetscCall(DemConfigFormatV(map->cfg, keyid, DemConfigOrigin(map->cfg, keyid) ? NULL : map->path, fmt, ap));
  va_end(ap);
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s", dem_last_error);
}

static PetscErrorCode DemYamlInputRelease(DemYamlInput *in)
{
  PetscFunctionBegin;
  if (in->extra_ready) yaml_document_delete(&in->extra);
  if (in->doc_ready) yaml_document_delete(&in->doc);
  if (in->parser_ready) yaml_parser_delete(&in->parser);
  if (in->fp) fclose(in->fp);
  in->extra_ready = in->doc_ready = in->parser_ready = PETSC_FALSE;
  in->fp          = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* formats libyaml's complaint into the last error, releases the input, gives the error class */
static PetscErrorCode DemYamlExplain(DemYamlInput *in, PetscErrorCode *cls)
{
  char        where[DEM_MSG_LEN];
  yaml_parser_t *p = (in && in->parser_ready) ? &in->parser : NULL;

  PetscFunctionBegin;
  *cls = PETSC_ERR_USER_INPUT;
  if (!in) {
    *cls = PETSC_ERR_LIB;
    DemSetLastError("libyaml could not add a node to the document (out of memory or invalid UTF-8)");
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (in->file) PetscCall(PetscSNPrintf(where, sizeof(where), "%s", in->file));
  else PetscCall(PetscSNPrintf(where, sizeof(where), "--set '%s'", in->assign));
  if (!p || p->error == YAML_MEMORY_ERROR || p->error == YAML_NO_ERROR) {
    *cls = PETSC_ERR_MEM;
    DemSetLastError("%s: libyaml: out of memory", where);
  } else if (p->error == YAML_READER_ERROR) {
    if (p->problem_value != -1) DemSetLastError("%s: YAML syntax error: %s: #%X at byte %zu", where, p->problem, (unsigned)p->problem_value, p->problem_offset);
    else DemSetLastError("%s: YAML syntax error: %s at byte %zu", where, p->problem, p->problem_offset);
  } else {
    char ctx[DEM_MSG_LEN] = "";

    if (p->context) PetscCall(PetscSNPrintf(ctx, sizeof(ctx), " (%s)", p->context));
    if (in->file) DemSetLastError("%s:%d:%d: YAML syntax error: %s%s", where, (int)p->problem_mark.line + 1, (int)p->problem_mark.column + 1, p->problem ? p->problem : "unknown problem", ctx);
    else if (p->problem_mark.index >= strlen(in->text)) DemSetLastError("%s: YAML syntax error at the end of the value: %s%s", where, p->problem ? p->problem : "unknown problem", ctx);
    else DemSetLastError("%s: YAML syntax error at character %zu of the value: %s%s", where, p->problem_mark.index + 1, p->problem ? p->problem : "unknown problem", ctx);
  }
  PetscCall(DemYamlInputRelease(in));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* loads the one document of an input (file or --set value); a second document is an error */
static PetscErrorCode DemYamlInputLoad(DemYamlInput *in)
{
  PetscFunctionBegin;
  DemCallYAML(in, yaml_parser_initialize(&in->parser));
  in->parser_ready = PETSC_TRUE;
  if (in->fp) yaml_parser_set_input_file(&in->parser, in->fp);
  else yaml_parser_set_input_string(&in->parser, (const unsigned char *)in->text, strlen(in->text));
  DemCallYAML(in, yaml_parser_load(&in->parser, &in->doc));
  in->doc_ready = PETSC_TRUE;
  if (yaml_document_get_root_node(&in->doc)) {
    DemCallYAML(in, yaml_parser_load(&in->parser, &in->extra));
    in->extra_ready = PETSC_TRUE;
    if (yaml_document_get_root_node(&in->extra)) {
      if (in->file) DemSetLastError("%s:%d:%d: more than one YAML document; a run description is a single document", in->file, (int)in->extra.start_mark.line + 1, (int)in->extra.start_mark.column + 1);
      else DemSetLastError("--set '%s': the value must be a single YAML value", in->assign);
      PetscCall(DemYamlInputRelease(in));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s", dem_last_error);
    }
    yaml_document_delete(&in->extra);
    in->extra_ready = PETSC_FALSE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemPathKey(const char *parent, const char *key, size_t keylen, char **path)
{
  size_t lp = strlen(parent);

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(lp + keylen + 2, path));
  if (lp) {
    memcpy(*path, parent, lp);
    (*path)[lp++] = '.';
  }
  memcpy(*path + lp, key, keylen);
  (*path)[lp + keylen] = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemPathIndex(const char *parent, PetscInt i, char **path)
{
  size_t len = strlen(parent) + 24;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(len, path));
  PetscCall(PetscSNPrintf(*path, len, "%s[%" PetscInt_FMT "]", parent, i));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* records a structural problem found by DemYamlCheckNode */
static PetscErrorCode DemYamlCheckFail(DemYamlCheckCtx *ctx, int id, const char *path, const char fmt[], ...)
{
  va_list ap;

  PetscFunctionBegin;
  va_start(ap, fmt);
  if (ctx->cfg) PetscCall(DemConfigFormatV(ctx->cfg, id, path, fmt, ap));
  else {
    char msg[DEM_MSG_LEN];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    DemSetLastError("--set '%s': %s", ctx->assign, msg);
  }
  va_end(ap);
  ctx->bad = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* checks one node and below: scalar and unique keys, no alias cycles, bounded depth */
static PetscErrorCode DemYamlCheckNode(DemYamlCheckCtx *ctx, int id, const char *path, int depth)
{
  yaml_node_t *n = yaml_document_get_node(ctx->doc, id);

  PetscFunctionBegin;
  if (ctx->state[id] == 2) PetscFunctionReturn(PETSC_SUCCESS); /* reached again through an alias */
  if (ctx->state[id] == 1) {
    PetscCall(DemYamlCheckFail(ctx, id, path, "an alias refers to a node that contains it (recursive structure)"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (depth > DEM_YAML_MAX_DEPTH) {
    PetscCall(DemYamlCheckFail(ctx, id, path, "nesting deeper than %d levels", DEM_YAML_MAX_DEPTH));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  ctx->state[id] = 1;
  if (n->type == YAML_MAPPING_NODE) {
    yaml_node_pair_t *pairs = n->data.mapping.pairs.start;
    PetscInt          np    = DemYamlLength(n);

    for (PetscInt i = 0; i < np && !ctx->bad; i++) {
      yaml_node_t *k = yaml_document_get_node(ctx->doc, pairs[i].key);
      char        *cpath;

      if (k->type != YAML_SCALAR_NODE) {
        char got[DEM_MSG_LEN];

        PetscCall(DemYamlDescribe(k, got, sizeof(got)));
        PetscCall(DemYamlCheckFail(ctx, pairs[i].key, path, "a key must be a plain value, got %s", got));
        break;
      }
      for (PetscInt j = 0; j < i; j++) {
        yaml_node_t *kj = yaml_document_get_node(ctx->doc, pairs[j].key);

        if (kj->data.scalar.length == k->data.scalar.length && !memcmp(kj->data.scalar.value, k->data.scalar.value, k->data.scalar.length)) {
          if (ctx->cfg) PetscCall(DemYamlCheckFail(ctx, pairs[i].key, path, "duplicate key '%s' (first at line %d)", (const char *)k->data.scalar.value, (int)kj->start_mark.line + 1));
          else PetscCall(DemYamlCheckFail(ctx, pairs[i].key, path, "duplicate key '%s'", (const char *)k->data.scalar.value));
          break;
        }
      }
      if (ctx->bad) break;
      PetscCall(DemPathKey(path, (const char *)k->data.scalar.value, k->data.scalar.length, &cpath));
      PetscCall(DemYamlCheckNode(ctx, pairs[i].value, cpath, depth + 1));
      PetscCall(PetscFree(cpath));
    }
  } else if (n->type == YAML_SEQUENCE_NODE) {
    PetscInt ni = DemYamlLength(n);

    for (PetscInt i = 0; i < ni && !ctx->bad; i++) {
      char *cpath;

      PetscCall(DemPathIndex(path, i, &cpath));
      PetscCall(DemYamlCheckNode(ctx, n->data.sequence.items.start[i], cpath, depth + 1));
      PetscCall(PetscFree(cpath));
    }
  }
  ctx->state[id] = 2;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* runs DemYamlCheckNode over a whole document; *bad tells whether the last error was set */
static PetscErrorCode DemYamlCheckDocument(yaml_document_t *doc, DemConfig *cfg, const char *assign, PetscBool *bad)
{
  DemYamlCheckCtx ctx;
  PetscInt        nn = DemYamlNodeCount(doc);

  PetscFunctionBegin;
  ctx.doc    = doc;
  ctx.cfg    = cfg;
  ctx.assign = assign;
  ctx.bad    = PETSC_FALSE;
  PetscCall(PetscCalloc1(nn + 1, &ctx.state));
  if (nn) PetscCall(DemYamlCheckNode(&ctx, 1, "", 0));
  PetscCall(PetscFree(ctx.state));
  *bad = ctx.bad;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemConfigNewHandle(DemConfig *cfg, DemNode parent, int id, char *path, DemNode *node)
{
  DemNode h;

  PetscFunctionBegin;
  if (cfg->nall == cfg->maxall) {
    cfg->maxall = cfg->maxall ? 2 * cfg->maxall : 64;
    PetscCall(PetscRealloc(sizeof(DemNode) * (size_t)cfg->maxall, &cfg->all));
  }
  PetscCall(PetscNew(&h));
  h->cfg                 = cfg;
  h->parent              = parent;
  h->id                  = id;
  h->path                = path;
  cfg->all[cfg->nall++] = h;
  *node                  = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the handle of the i-th value of a mapping or item of a sequence, created on first use */
static PetscErrorCode DemNodeChild(DemNode parent, PetscInt i, DemNode *child)
{
  yaml_node_t *n = DemNodeYaml(parent);
  PetscInt     len = DemYamlLength(n);
  int          id;
  char        *path;

  PetscFunctionBegin;
  PetscCheck(i >= 0 && i < len, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: index %" PetscInt_FMT " out of range [0, %" PetscInt_FMT ")", parent->path[0] ? parent->path : "(root)", i, len);
  if (i >= parent->nchild) {
    PetscInt nnew = len;

    PetscCall(PetscRealloc(sizeof(DemNode) * (size_t)nnew, &parent->child));
    for (PetscInt j = parent->nchild; j < nnew; j++) parent->child[j] = NULL;
    parent->nchild = nnew;
  }
  if (!parent->child[i]) {
    if (n->type == YAML_MAPPING_NODE) {
      yaml_node_pair_t *pair = &n->data.mapping.pairs.start[i];
      yaml_node_t      *k    = yaml_document_get_node(&parent->cfg->doc, pair->key);

      id = pair->value;
      PetscCall(DemPathKey(parent->path, (const char *)k->data.scalar.value, k->data.scalar.length, &path));
    } else {
      id = n->data.sequence.items.start[i];
      PetscCall(DemPathIndex(parent->path, i, &path));
    }
    PetscCall(DemConfigNewHandle(parent->cfg, parent, id, path, &parent->child[i]));
  }
  *child = parent->child[i];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* position of a key in a mapping node, -1 if absent */
static PetscErrorCode DemYamlFindKey(yaml_document_t *doc, yaml_node_t *map, const char *key, size_t keylen, PetscInt *pos)
{
  PetscInt np = DemYamlLength(map);

  PetscFunctionBegin;
  *pos = -1;
  for (PetscInt i = 0; i < np; i++) {
    yaml_node_t *k = yaml_document_get_node(doc, map->data.mapping.pairs.start[i].key);

    if (k->type == YAML_SCALAR_NODE && k->data.scalar.length == keylen && !memcmp(k->data.scalar.value, key, keylen)) {
      *pos = i;
      break;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemConfigDestroy(DemNode *root)
{
  DemConfig *cfg;

  PetscFunctionBegin;
  if (!root || !*root) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(!(*root)->parent, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "DemConfigDestroy() takes the root handle, got %s", (*root)->path);
  cfg = (*root)->cfg;
  for (PetscInt i = 0; i < cfg->nall; i++) {
    PetscCall(PetscFree(cfg->all[i]->path));
    PetscCall(PetscFree(cfg->all[i]->child));
    PetscCall(PetscFree(cfg->all[i]));
  }
  PetscCall(PetscFree(cfg->all));
  for (PetscInt i = 0; i < cfg->nsets; i++) {
    PetscCall(PetscFree(cfg->sets[i].assign_path));
    PetscCall(PetscFree(cfg->sets[i].node_path));
  }
  PetscCall(PetscFree(cfg->sets));
  PetscCall(PetscFree(cfg->origin));
  PetscCall(PetscFree(cfg->file));
  yaml_document_delete(&cfg->doc);
  PetscCall(PetscFree(cfg));
  *root = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemConfigLoad(const char file[], DemNode *root)
{
  DemYamlInput in;
  DemConfig   *cfg;
  yaml_node_t *top;
  char        *path;
  PetscBool    bad;
  struct stat  st;

  PetscFunctionBegin;
  PetscCheck(file && root, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "DemConfigLoad() needs a file name and a place for the root");
  *root = NULL;
  PetscCall(PetscMemzero(&in, sizeof(in)));
  in.file = file;
  in.fp   = fopen(file, "rb");
  if (in.fp && !stat(file, &st) && S_ISDIR(st.st_mode)) {
    fclose(in.fp);
    in.fp = NULL;
    errno = EISDIR;
  }
  if (!in.fp) {
    DemSetLastError("%s: cannot open: %s", file, strerror(errno));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s", dem_last_error);
  }
  PetscCall(DemYamlInputLoad(&in));

  PetscCall(PetscNew(&cfg));
  cfg->doc     = in.doc;
  in.doc_ready = PETSC_FALSE;
  PetscCall(DemYamlInputRelease(&in));
  PetscCall(PetscStrallocpy(file, &cfg->file));
  PetscCall(PetscStrallocpy("", &path));
  top = yaml_document_get_root_node(&cfg->doc);
  PetscCall(DemConfigNewHandle(cfg, NULL, top ? 1 : 0, path, root));

  if (!top || (top->type == YAML_SCALAR_NODE && top->data.scalar.length == 0)) {
    DemSetLastError("%s:%d:%d: the run description is empty; expected a mapping of keys to values", file, (int)cfg->doc.start_mark.line + 1, (int)cfg->doc.start_mark.column + 1);
    PetscCall(DemConfigDestroy(root));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s", dem_last_error);
  }
  if (top->type != YAML_MAPPING_NODE) {
    char got[DEM_MSG_LEN];

    PetscCall(DemYamlDescribe(top, got, sizeof(got)));
    DemSetLastError("%s:%d:%d: the run description must be a mapping of keys to values, got %s", file, (int)top->start_mark.line + 1, (int)top->start_mark.column + 1, got);
    PetscCall(DemConfigDestroy(root));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s", dem_last_error);
  }
  PetscCall(DemYamlCheckDocument(&cfg->doc, cfg, NULL, &bad));
  if (bad) {
    PetscCall(DemConfigDestroy(root));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s", dem_last_error);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* copies node sid of a parsed --set value (and everything below) into the run description */
static PetscErrorCode DemConfigGraft(DemConfig *cfg, yaml_document_t *src, int sid, int *did)
{
  yaml_node_t *s = yaml_document_get_node(src, sid);
  PetscInt     len = DemYamlLength(s);

  PetscFunctionBegin;
  switch (s->type) {
  case YAML_SCALAR_NODE:
    PetscCheck(s->data.scalar.length < INT_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "--set value too long");
    DemCallYAML(NULL, *did = yaml_document_add_scalar(&cfg->doc, s->tag, s->data.scalar.value, (int)s->data.scalar.length, s->data.scalar.style));
    break;
  case YAML_SEQUENCE_NODE:
    DemCallYAML(NULL, *did = yaml_document_add_sequence(&cfg->doc, s->tag, s->data.sequence.style));
    for (PetscInt i = 0; i < len; i++) {
      int item;

      PetscCall(DemConfigGraft(cfg, src, s->data.sequence.items.start[i], &item));
      DemCallYAML(NULL, yaml_document_append_sequence_item(&cfg->doc, *did, item));
    }
    break;
  case YAML_MAPPING_NODE:
    DemCallYAML(NULL, *did = yaml_document_add_mapping(&cfg->doc, s->tag, s->data.mapping.style));
    for (PetscInt i = 0; i < len; i++) {
      int key, value;

      PetscCall(DemConfigGraft(cfg, src, s->data.mapping.pairs.start[i].key, &key));
      PetscCall(DemConfigGraft(cfg, src, s->data.mapping.pairs.start[i].value, &value));
      DemCallYAML(NULL, yaml_document_append_mapping_pair(&cfg->doc, *did, key, value));
    }
    break;
  default:
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "libyaml returned a node of unknown type");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the --set value as a node of the run description: YAML for flow collections and quoted
   scalars, otherwise the text verbatim as a plain scalar */
static PetscErrorCode DemConfigSetValue(DemConfig *cfg, const char assignment[], const char value[], int *did)
{
  PetscFunctionBegin;
  if (value[0] && strchr("[{\"'", value[0])) {
    DemYamlInput in;
    PetscBool    bad;

    PetscCall(PetscMemzero(&in, sizeof(in)));
    in.assign = assignment;
    in.text   = value;
    PetscCall(DemYamlInputLoad(&in));
    PetscCall(DemYamlCheckDocument(&in.doc, NULL, assignment, &bad));
    if (bad) {
      PetscCall(DemYamlInputRelease(&in));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "%s", dem_last_error);
    }
    PetscCall(DemConfigGraft(cfg, &in.doc, 1, did));
    PetscCall(DemYamlInputRelease(&in));
  } else {
    size_t len = strlen(value);

    PetscCheck(len < INT_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "--set value too long");
    DemCallYAML(NULL, *did = yaml_document_add_scalar(&cfg->doc, NULL, (const yaml_char_t *)value, (int)len, YAML_PLAIN_SCALAR_STYLE));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemConfigSet(DemNode root, const char assignment[])
{
  DemConfig          *cfg;
  const char         *eq, *c, *e;
  DemNode             cur, target = NULL;
  DemConfigSetRecord *rec;
  PetscInt            n0, nn;
  int                 vid, origin;

  PetscFunctionBegin;
  PetscCheck(root && assignment, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "DemConfigSet() needs the root and an assignment");
  PetscCheck(!root->parent, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "DemConfigSet() takes the root handle, got %s", root->path);
  cfg = root->cfg;
  eq  = strchr(assignment, '=');
  DemSetCheck(eq, assignment, "expected key.path=value");
  DemSetCheck(eq > assignment, assignment, "the key path before '=' is empty");
  for (c = assignment;; c = e + 1) {
    for (e = c; e < eq && *e != '.'; e++) { }
    DemSetCheck(e > c, assignment, "empty component in the key path '%.*s'", (int)(eq - assignment), assignment);
    if (e == eq) break;
  }

  /* walk the existing nodes; nothing changes until the value has been parsed */
  cur = root;
  for (c = assignment;; c = e + 1) {
    yaml_node_t *n = DemNodeYaml(cur);
    PetscInt     pos;
    DemNode      child;

    for (e = c; e < eq && *e != '.'; e++) { }
    if (n->type == YAML_MAPPING_NODE) PetscCall(DemYamlFindKey(&cfg->doc, n, c, (size_t)(e - c), &pos));
    else {
      PetscInt len = DemYamlLength(n), idx = 0;

      for (const char *d = c; d < e; d++) {
        DemSetCheck(*d >= '0' && *d <= '9', assignment, "%s is a list: expected an item index, got '%.*s'", cur->path, (int)(e - c), c);
        DemSetCheck(idx < PETSC_MAX_INT / 10 - 10, assignment, "%s: index '%.*s' is out of range", cur->path, (int)(e - c), c);
        idx = 10 * idx + (*d - '0');
      }
      DemSetCheck(idx < len, assignment, "%s has %" PetscInt_FMT " item%s: index %" PetscInt_FMT " is out of range", cur->path, len, len == 1 ? "" : "s", idx);
      pos = idx;
    }
    if (pos < 0) break;
    PetscCall(DemNodeChild(cur, pos, &child));
    if (e == eq) {
      target = child;
      break;
    }
    DemSetCheck(DemNodeGetType(child) != DEM_NODE_SCALAR, assignment, "%s is a value ('%s'), not a mapping or a list", child->path, DemNodeScalar(child));
    cur = child;
  }

  if (cfg->nsets == cfg->maxsets) {
    cfg->maxsets = cfg->maxsets ? 2 * cfg->maxsets : 8;
    PetscCall(PetscRealloc(sizeof(DemConfigSetRecord) * (size_t)cfg->maxsets, &cfg->sets));
  }
  rec = &cfg->sets[cfg->nsets];
  PetscCall(PetscMalloc1((size_t)(eq - assignment) + 1, &rec->assign_path));
  memcpy(rec->assign_path, assignment, (size_t)(eq - assignment));
  rec->assign_path[eq - assignment] = 0;
  if (target) PetscCall(PetscStrallocpy(target->path, &rec->node_path));
  else PetscCall(DemPathKey(cur->path, c, (size_t)(eq - c), &rec->node_path));
  cfg->nsets++;
  origin = (int)cfg->nsets;

  n0 = DemYamlNodeCount(&cfg->doc);
  PetscCall(DemConfigSetValue(cfg, assignment, eq + 1, &vid));
  if (target) {
    /* swap the node slots: the target's id now holds the new value, so every handle and
       alias sees it; the old value stays in the document, unreferenced, until it is freed */
    yaml_node_t tmp = cfg->doc.nodes.start[target->id - 1];

    cfg->doc.nodes.start[target->id - 1] = cfg->doc.nodes.start[vid - 1];
    cfg->doc.nodes.start[vid - 1]        = tmp;
    for (PetscInt i = 0; i < cfg->nall; i++) {
      DemNode h = cfg->all[i];

      if (h->id == target->id) {
        PetscCall(PetscFree(h->child));
        h->nchild = 0;
      }
    }
  } else {
    int mapid = cur->id;

    for (;; c = e + 1) {
      int key, value;

      for (e = c; e < eq && *e != '.'; e++) { }
      DemCallYAML(NULL, key = yaml_document_add_scalar(&cfg->doc, NULL, (const yaml_char_t *)c, (int)(e - c), YAML_PLAIN_SCALAR_STYLE));
      if (e == eq) value = vid;
      else DemCallYAML(NULL, value = yaml_document_add_mapping(&cfg->doc, NULL, YAML_BLOCK_MAPPING_STYLE));
      DemCallYAML(NULL, yaml_document_append_mapping_pair(&cfg->doc, mapid, key, value));
      if (e == eq) break;
      mapid = value;
    }
  }

  nn = DemYamlNodeCount(&cfg->doc);
  if (nn > cfg->norigin) {
    PetscCall(PetscRealloc(sizeof(int) * (size_t)nn, &cfg->origin));
    for (PetscInt i = cfg->norigin; i < nn; i++) cfg->origin[i] = 0;
    cfg->norigin = nn;
  }
  for (PetscInt i = n0; i < nn; i++) cfg->origin[i] = origin;
  if (target) cfg->origin[target->id - 1] = origin;
  PetscFunctionReturn(PETSC_SUCCESS);
}

DemNodeType DemNodeGetType(DemNode node)
{
  yaml_node_t *n;

  PetscFunctionBegin;
  if (!node || !(n = DemNodeYaml(node))) PetscFunctionReturn(DEM_NODE_NONE);
  switch (n->type) {
  case YAML_SCALAR_NODE:
    PetscFunctionReturn(DEM_NODE_SCALAR);
  case YAML_SEQUENCE_NODE:
    PetscFunctionReturn(DEM_NODE_SEQ);
  case YAML_MAPPING_NODE:
    PetscFunctionReturn(DEM_NODE_MAP);
  default:
    PetscFunctionReturn(DEM_NODE_NONE);
  }
}

const char *DemNodePath(DemNode node)
{
  PetscFunctionBegin;
  PetscFunctionReturn(node ? node->path : "");
}

const char *DemNodeFile(DemNode node)
{
  PetscFunctionBegin;
  PetscFunctionReturn(node ? node->cfg->file : "");
}

PetscErrorCode DemNodeLocation(DemNode node, int *line, int *col)
{
  yaml_node_t *n;

  PetscFunctionBegin;
  PetscCheck(node, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "DemNodeLocation() of a NULL node");
  n = DemNodeYaml(node);
  if (line) *line = 0;
  if (col) *col = 0;
  if (n && !DemConfigOrigin(node->cfg, node->id)) {
    if (line) *line = (int)n->start_mark.line + 1;
    if (col) *col = (int)n->start_mark.column + 1;
  } else if (!n) {
    if (line) *line = 1;
    if (col) *col = 1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

const char *DemNodeScalar(DemNode node)
{
  yaml_node_t *n;

  PetscFunctionBegin;
  if (!node || !(n = DemNodeYaml(node)) || n->type != YAML_SCALAR_NODE) PetscFunctionReturn(NULL);
  PetscFunctionReturn((const char *)n->data.scalar.value);
}

/* refuses a node that is not of the wanted kind, naming what it holds */
static PetscErrorCode DemNodeExpect(DemNode node, yaml_node_type_t type, const char what[])
{
  yaml_node_t *n = DemNodeYaml(node);

  PetscFunctionBegin;
  if (!n || n->type != type) {
    char got[DEM_MSG_LEN];

    PetscCall(DemYamlDescribe(n, got, sizeof(got)));
    PetscCall(DemNodeError(node, "expected %s, got %s", what, got));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeAllowKeys(DemNode map, const char *const keys[])
{
  yaml_node_t *n;
  PetscInt     np;

  PetscFunctionBegin;
  if (!map) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemNodeExpect(map, YAML_MAPPING_NODE, "a mapping"));
  n  = DemNodeYaml(map);
  np = DemYamlLength(n);
  for (PetscInt i = 0; i < np; i++) {
    int          kid = n->data.mapping.pairs.start[i].key;
    const char  *key = (const char *)yaml_document_get_node(&map->cfg->doc, kid)->data.scalar.value;
    PetscBool    ok  = PETSC_FALSE;

    for (PetscInt j = 0; keys && keys[j]; j++)
      if (!strcmp(keys[j], key)) ok = PETSC_TRUE;
    if (!ok) {
      char allowed[DEM_MSG_LEN] = "";

      for (PetscInt j = 0; keys && keys[j]; j++) {
        if (j) PetscCall(PetscStrlcat(allowed, ", ", sizeof(allowed)));
        PetscCall(PetscStrlcat(allowed, keys[j], sizeof(allowed)));
      }
      if (allowed[0]) PetscCall(DemNodeKeyError(map, kid, "unknown key '%s'; allowed: %s", key, allowed));
      else PetscCall(DemNodeKeyError(map, kid, "unknown key '%s'; no keys are allowed here", key));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeGet(DemNode map, const char key[], DemNode *child)
{
  PetscInt pos;

  PetscFunctionBegin;
  PetscCheck(key && child, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "DemNodeGet() needs a key and a place for the child");
  *child = NULL;
  if (!map) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemNodeExpect(map, YAML_MAPPING_NODE, "a mapping"));
  PetscCall(DemYamlFindKey(&map->cfg->doc, DemNodeYaml(map), key, strlen(key), &pos));
  if (pos >= 0) PetscCall(DemNodeChild(map, pos, child));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeSeqLength(DemNode seq, PetscInt *len)
{
  PetscFunctionBegin;
  PetscCheck(seq && len, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "DemNodeSeqLength() needs a node and a place for the length");
  PetscCall(DemNodeExpect(seq, YAML_SEQUENCE_NODE, "a list"));
  *len = DemYamlLength(DemNodeYaml(seq));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeSeqItem(DemNode seq, PetscInt i, DemNode *item)
{
  PetscFunctionBegin;
  PetscCheck(seq && item, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "DemNodeSeqItem() needs a node and a place for the item");
  PetscCall(DemNodeExpect(seq, YAML_SEQUENCE_NODE, "a list"));
  PetscCall(DemNodeChild(seq, i, item));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeMapLength(DemNode map, PetscInt *len)
{
  PetscFunctionBegin;
  PetscCheck(map && len, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "DemNodeMapLength() needs a node and a place for the length");
  PetscCall(DemNodeExpect(map, YAML_MAPPING_NODE, "a mapping"));
  *len = DemYamlLength(DemNodeYaml(map));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeMapItem(DemNode map, PetscInt i, const char **key, DemNode *value)
{
  yaml_node_t *n;

  PetscFunctionBegin;
  PetscCheck(map, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "DemNodeMapItem() of a NULL node");
  PetscCall(DemNodeExpect(map, YAML_MAPPING_NODE, "a mapping"));
  n = DemNodeYaml(map);
  PetscCheck(i >= 0 && i < DemYamlLength(n), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%s: item %" PetscInt_FMT " out of range [0, %" PetscInt_FMT ")", map->path[0] ? map->path : "(root)", i, DemYamlLength(n));
  if (key) *key = (const char *)yaml_document_get_node(&map->cfg->doc, n->data.mapping.pairs.start[i].key)->data.scalar.value;
  if (value) PetscCall(DemNodeChild(map, i, value));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the value under key, or NULL when absent and not required; refuses a non-mapping */
static PetscErrorCode DemNodeLookup(DemNode map, const char key[], PetscBool required, DemNode *child)
{
  PetscFunctionBegin;
  *child = NULL;
  if (!map) {
    PetscCheck(!required, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "missing required key '%s' (no mapping given)", key);
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(DemNodeGet(map, key, child));
  if (!*child && required) PetscCall(DemNodeError(map, "missing required key '%s'", key));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemNodeAsInt(DemNode node, PetscInt *val)
{
  const char *s;
  char       *end;
  long        l;
  double      d;

  PetscFunctionBegin;
  PetscCall(DemNodeExpect(node, YAML_SCALAR_NODE, "an integer"));
  s     = DemNodeScalar(node);
  errno = 0;
  l     = strtol(s, &end, 10);
  if (s[0] && !*end && !errno && l >= PETSC_MIN_INT && l <= PETSC_MAX_INT) {
    *val = (PetscInt)l;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  d = strtod(s, &end);
  DemNodeCheck(node, s[0] && !*end && isfinite(d) && d == floor(d), "expected an integer, got '%s'", s);
  DemNodeCheck(node, d >= PETSC_MIN_INT && d <= PETSC_MAX_INT, "expected an integer between %d and %d, got '%s'", (int)PETSC_MIN_INT, (int)PETSC_MAX_INT, s);
  *val = (PetscInt)d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeAsReal(DemNode node, PetscReal *val)
{
  const char *s;
  char       *end;
  double      d;

  PetscFunctionBegin;
  PetscCheck(node && val, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "DemNodeAsReal() needs a node and a place for the value");
  PetscCall(DemNodeExpect(node, YAML_SCALAR_NODE, "a number"));
  s = DemNodeScalar(node);
  d = strtod(s, &end);
  DemNodeCheck(node, s[0] && !*end, "expected a number, got '%s'", s);
  DemNodeCheck(node, isfinite(d), "expected a finite number, got '%s'", s);
  *val = (PetscReal)d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DemNodeAsBool(DemNode node, PetscBool *val)
{
  static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};
  const char              *s;

  PetscFunctionBegin;
  PetscCall(DemNodeExpect(node, YAML_SCALAR_NODE, "true or false"));
  s = DemNodeScalar(node);
  for (int i = 0; i < 3; i++) {
    PetscBool same;

    PetscCall(PetscStrcasecmp(s, yes[i], &same));
    if (same) {
      *val = PETSC_TRUE;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    PetscCall(PetscStrcasecmp(s, no[i], &same));
    if (same) {
      *val = PETSC_FALSE;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCall(DemNodeError(node, "expected true or false, got '%s'", s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeGetReal(DemNode map, const char key[], PetscBool required, PetscReal *val)
{
  DemNode v;

  PetscFunctionBegin;
  PetscCall(DemNodeLookup(map, key, required, &v));
  if (v) PetscCall(DemNodeAsReal(v, val));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeGetInt(DemNode map, const char key[], PetscBool required, PetscInt *val)
{
  DemNode v;

  PetscFunctionBegin;
  PetscCall(DemNodeLookup(map, key, required, &v));
  if (v) PetscCall(DemNodeAsInt(v, val));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeGetBool(DemNode map, const char key[], PetscBool required, PetscBool *val)
{
  DemNode v;

  PetscFunctionBegin;
  PetscCall(DemNodeLookup(map, key, required, &v));
  if (v) PetscCall(DemNodeAsBool(v, val));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeGetString(DemNode map, const char key[], PetscBool required, const char **val)
{
  DemNode v;

  PetscFunctionBegin;
  PetscCall(DemNodeLookup(map, key, required, &v));
  if (v) {
    PetscCall(DemNodeExpect(v, YAML_SCALAR_NODE, "a string"));
    *val = DemNodeScalar(v);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a list of exactly n items, refused as a whole before any item is read */
static PetscErrorCode DemNodeExpectList(DemNode v, PetscInt n, const char what[], const char whats[])
{
  yaml_node_t *yn = DemNodeYaml(v);

  PetscFunctionBegin;
  if (!yn || yn->type != YAML_SEQUENCE_NODE || DemYamlLength(yn) != n) {
    char got[DEM_MSG_LEN];

    PetscCall(DemYamlDescribe(yn, got, sizeof(got)));
    PetscCall(DemNodeError(v, "expected a list of %" PetscInt_FMT " %s, got %s", n, n == 1 ? what : whats, got));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeGetRealArray(DemNode map, const char key[], PetscBool required, PetscInt n, PetscReal val[])
{
  DemNode   v, item;
  PetscReal tmp[64], *out = tmp;

  PetscFunctionBegin;
  PetscCall(DemNodeLookup(map, key, required, &v));
  if (!v) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemNodeExpectList(v, n, "number", "numbers"));
  /* read into a scratch array first so a bad item leaves val untouched */
  if (n > 64) PetscCall(PetscMalloc1(n, &out));
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(DemNodeChild(v, i, &item));
    PetscCall(DemNodeAsReal(item, &out[i]));
  }
  PetscCall(PetscArraycpy(val, out, n));
  if (out != tmp) PetscCall(PetscFree(out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeGetBoolArray(DemNode map, const char key[], PetscBool required, PetscInt n, PetscBool val[])
{
  DemNode   v, item;
  PetscBool tmp[64], *out = tmp;

  PetscFunctionBegin;
  PetscCall(DemNodeLookup(map, key, required, &v));
  if (!v) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(DemNodeExpectList(v, n, "boolean (true/false)", "booleans (true/false)"));
  if (n > 64) PetscCall(PetscMalloc1(n, &out));
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(DemNodeChild(v, i, &item));
    PetscCall(DemNodeAsBool(item, &out[i]));
  }
  PetscCall(PetscArraycpy(val, out, n));
  if (out != tmp) PetscCall(PetscFree(out));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode DemNodeGetChoice(DemNode map, const char key[], const char *const choices[], PetscBool required, PetscInt *idx)
{
  DemNode     v;
  const char *s;
  char        allowed[DEM_MSG_LEN] = "", got[DEM_MSG_LEN];

  PetscFunctionBegin;
  PetscCall(DemNodeLookup(map, key, required, &v));
  if (!v) PetscFunctionReturn(PETSC_SUCCESS);
  s = DemNodeScalar(v);
  for (PetscInt j = 0; choices[j]; j++) {
    if (s && !strcmp(s, choices[j])) {
      *idx = j;
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    if (j) PetscCall(PetscStrlcat(allowed, ", ", sizeof(allowed)));
    PetscCall(PetscStrlcat(allowed, choices[j], sizeof(allowed)));
  }
  PetscCall(DemYamlDescribe(DemNodeYaml(v), got, sizeof(got)));
  PetscCall(DemNodeError(v, "'%s' must be one of: %s (got %s)", key, allowed, got));
  PetscFunctionReturn(PETSC_SUCCESS);
}
