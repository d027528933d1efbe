package decode

// OracleTableVersion identifies the Oracle tables below; bump it when a
// mapping changes meaning (not when one is added).
const OracleTableVersion = "oracle-1 (2025): rowsources of 11.2 to 23ai"

// oracleRowsources maps qer* (query execution rowsource) function-name
// prefixes to the execution-plan operation they implement, as shown in
// V$SQL_PLAN.OPERATION. The longest matching prefix wins, so qercbi is not
// swallowed by qercb. Operation names are Oracle's plan vocabulary; the
// prefix attributions are public community knowledge (os_explain, the
// "ORA-600 lookup" categories, published stack traces), checked against
// each other. Entries marked "(uncertain)" in oracleNotes have a single
// source.
var oracleRowsources = map[string]string{
	"qerae":             "AND-EQUAL",
	"qerba":             "BITMAP AND",
	"qerbc":             "BITMAP COMPACTION",
	"qerbi":             "BITMAP CREATION",
	"qerbl":             "JOIN FILTER", // bloom filter create/use (11.2+, common in 12c+ hash joins)
	"qerbm":             "MINUS",
	"qerbo":             "BITMAP OR",
	"qerbt":             "BITMAP CONVERSION",
	"qerbu":             "BITMAP UNLIMITED-OR",
	"qerbx":             "BITMAP INDEX ACCESS",
	"qercb":             "CONNECT BY",
	"qercbi":            "CONNECT BY SUPPORT",
	"qerco":             "COUNT",
	"qerdl":             "DELETE",
	"qerep":             "EXPLOSION",
	"qerff":             "FIFO BUFFER",
	"qerfi":             "FIRST ROW",
	"qerfl":             "FILTER",
	"qerfu":             "UPDATE",
	"qerfx":             "FIXED TABLE",
	"qergh":             "HASH GROUP BY",
	"qergi":             "GRANULE ITERATOR",
	"qergr":             "GROUP BY ROLLUP",
	"qergs":             "SORT GROUP BY",
	"qergv":             "VECTOR GROUP BY", // 12.1.0.2+ in-memory aggregation
	"qerhc":             "HASH CLUSTER ACCESS",
	"qerhj":             "HASH JOIN",
	"qerhn":             "HASH JOIN", // the 12c+ hash-join implementation (qerhnFetch, qerhnProbe...)
	"qeril":             "INLIST ITERATOR",
	"qerim":             "INDEX MAINTENANCE",
	"qerix":             "INDEX",
	"qerjm":             "MERGE JOIN",
	"qerjo":             "NESTED LOOPS OUTER",
	"qerjot":            "NESTED LOOPS",
	"qerle":             "LINEAR EXECUTION",
	"qerli":             "PARALLEL CREATE INDEX",
	"qerlt":             "LOAD TABLE",
	"qermr":             "MATCH RECOGNIZE",
	"qerns":             "GROUP BY NOSORT",
	"qeroc":             "COLLECTION ITERATOR",
	"qeroi":             "DOMAIN INDEX",
	"qerpa":             "PARTITION",
	"qerpf":             "PREFETCH",
	"qerptf":            "POLYMORPHIC TABLE FUNCTION",
	"qerpx":             "PX COORDINATOR",
	"qerrm":             "REMOTE",
	"qersc":             "STATISTICS COLLECTOR", // adaptive plans (12c+)
	"qerse":             "SET OPERATION",
	"qerso":             "SORT",
	"qersq":             "SEQUENCE",
	"qerst":             "STATISTICS",
	"qertb":             "TABLE ACCESS",
	"qertbFetchByRowID": "TABLE ACCESS BY ROWID",
	"qertq":             "TABLE QUEUE",
	"qerua":             "UNION-ALL",
	"qerup":             "UPDATE",
	"qerus":             "UPSERT",
	"qervw":             "VIEW",
	"qerwn":             "WINDOW",
	"qerxj":             "JSONTABLE EVALUATION",
	"qerxt":             "EXTERNAL TABLE ACCESS",
}

// oracleNotes flags attributions resting on a single public source.
var oracleNotes = map[string]string{
	"qergv":  "uncertain: attributed to vector group by (in-memory aggregation)",
	"qerjm":  "uncertain: attributed to sort-merge join",
	"qermr":  "uncertain: attributed to MATCH_RECOGNIZE",
	"qerxj":  "uncertain: attributed to JSON_TABLE",
	"qerptf": "uncertain: attributed to polymorphic table functions (18c+)",
	"qerpf":  "uncertain: attributed to prefetching rowsources",
	"qerle":  "uncertain",
	"qerjot": "os_explain reads it as nested loops; other lists call it join tunneling",
}

// oracleFetch marks the call-interface frames under which rowsources run:
// the fetch call roots the plan in the "plan" view.
var oracleFetch = map[string]string{
	"opifch": "FETCH",
}

// oracleLayers describes Oracle kernel code layers by function-name
// prefix, written for latscope from public knowledge (Oracle's own
// documentation of the layered kernel, conference talks, blog posts).
// Describe joins the matches of every prefix length, outer to inner.
var oracleLayers = map[string]string{
	"k":       "Oracle kernel",
	"kc":      "cache and recovery layer",
	"kcb":     "buffer cache: finding, pinning and reading data blocks",
	"kcbgtcr": "get a block in consistent-read mode (logical read)",
	"kcbgcur": "get a block in current mode (for change)",
	"kcbz":    "buffer cache internals (e.g. reading a block into the cache)",
	"kcbl":    "direct-path reads and writes that bypass the cache",
	"kcc":     "control file",
	"kcl":     "cluster (RAC) cache coordination",
	"kcr":     "redo",
	"kcrf":    "redo log files and the log buffer",
	"kcs":     "system change numbers (SCN)",
	"kd":      "data layer: rows inside blocks",
	"kdb":     "row and block operations",
	"kdi":     "B-tree index access",
	"kds":     "row fetch and table scan",
	"kdst":    "table scan",
	"kdstf":   "full table scan (variants specialised per column set)",
	"kdu":     "row update and delete",
	"kdt":     "row insert",
	"kdz":     "hybrid columnar compression",
	"kf":      "ASM (automatic storage management)",
	"kg":      "generic services",
	"kgh":     "heap (memory) manager",
	"kgl":     "library cache: shared SQL and PL/SQL objects",
	"kgx":     "mutexes",
	"kj":      "RAC global enqueues and locks",
	"kk":      "SQL compilation",
	"kko":     "cost-based optimizer",
	"kkq":     "query transformations",
	"kks":     "shared cursors: finding, sharing and building child cursors",
	"kp":      "programmatic interface (server side of client calls)",
	"kpo":     "server side of OCI calls",
	"kq":      "dictionary cache",
	"kqr":     "row cache (dictionary objects)",
	"ks":      "service layer",
	"ksf":     "OS file and process services",
	"ksfd":    "file I/O to data files",
	"ksl":     "latches and post/wait",
	"kslwt":   "wait-event instrumentation",
	"ksm":     "shared memory (SGA/PGA) allocation",
	"ksq":     "enqueues (locks)",
	"ksu":     "sessions and processes",
	"kt":      "transaction layer",
	"ktb":     "block transaction header (ITL)",
	"ktc":     "transaction control",
	"kts":     "segment and space management",
	"ktu":     "undo",
	"kx":      "SQL execution",
	"kxfp":    "parallel execution messaging",
	"kxs":     "cursor execution runtime",
	"kz":      "security and auditing",
	"opi":     "Oracle program interface: dispatch of parse/execute/fetch calls",
	"opiexe":  "execute call",
	"opifch":  "fetch call: pulls rows from the plan's rowsources",
	"opiprs":  "parse call",
	"qer":     "query execution rowsource (an operation of the execution plan)",
	"qes":     "query execution support (aggregation, hashing, sorting helpers)",
	"rwsfcd":  "rowsource fetch callback",
}
