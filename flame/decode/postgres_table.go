package decode

// PostgresTableVersion identifies the PostgreSQL tables below.
const PostgresTableVersion = "postgres-1 (2025): executor of PostgreSQL 13 to 17"

// postgresNodes maps executor functions to the plan node they run, as
// EXPLAIN names it. Most are static: only builds with symbols (compiled
// from source, or with debug symbols installed) show them. Matched whole,
// not by prefix (ExecHash must not catch ExecHashJoin).
var postgresNodes = map[string]string{
	"ExecAppend":               "Append",
	"ExecBitmapAnd":            "BitmapAnd",
	"MultiExecBitmapAnd":       "BitmapAnd",
	"ExecBitmapHeapScan":       "Bitmap Heap Scan",
	"MultiExecBitmapIndexScan": "Bitmap Index Scan",
	"MultiExecBitmapOr":        "BitmapOr",
	"ExecCteScan":              "CTE Scan",
	"ExecCustomScan":           "Custom Scan",
	"ExecForeignScan":          "Foreign Scan",
	"ExecFunctionScan":         "Function Scan",
	"ExecGather":               "Gather",
	"ExecGatherMerge":          "Gather Merge",
	"ExecGroup":                "Group",
	"ExecHash":                 "Hash",
	"MultiExecHash":            "Hash",
	"ExecHashJoin":             "Hash Join",
	"ExecParallelHashJoin":     "Hash Join",
	"ExecIncrementalSort":      "Incremental Sort",
	"ExecIndexOnlyScan":        "Index Only Scan",
	"ExecIndexScan":            "Index Scan",
	"ExecLimit":                "Limit",
	"ExecLockRows":             "LockRows",
	"ExecMaterial":             "Materialize",
	"ExecMemoize":              "Memoize",
	"ExecMergeAppend":          "Merge Append",
	"ExecMergeJoin":            "Merge Join",
	"ExecNamedTuplestoreScan":  "Named Tuplestore Scan",
	"ExecNestLoop":             "Nested Loop",
	"ExecProjectSet":           "ProjectSet",
	"ExecRecursiveUnion":       "Recursive Union",
	"ExecResult":               "Result",
	"ExecSampleScan":           "Sample Scan",
	"ExecSeqScan":              "Seq Scan",
	"ExecSetOp":                "SetOp",
	"ExecSort":                 "Sort",
	"ExecSubqueryScan":         "Subquery Scan",
	"ExecTableFuncScan":        "Table Function Scan",
	"ExecTidRangeScan":         "Tid Range Scan",
	"ExecTidScan":              "Tid Scan",
	"ExecUnique":               "Unique",
	"ExecValuesScan":           "Values Scan",
	"ExecWindowAgg":            "WindowAgg",
	"ExecWorkTableScan":        "WorkTable Scan",
}

// postgresSlots are node functions whose node type depends on what they
// call: ExecScan (exported) runs every scan node, ExecAgg runs plain,
// sorted and hashed aggregation, ExecModifyTable runs INSERT, UPDATE and
// DELETE. The node is named from evidence found below the frame, before
// the next node, in any sample passing through the same frame.
var postgresSlots = map[string]slot{
	"ExecScan": {def: "Scan", evidence: map[string]string{
		"heap_getnextslot":            "Seq Scan",
		"heap_getnextslot_tidrange":   "Tid Range Scan",
		"index_getnext_slot":          "Index Scan",
		"index_getnext_tid":           "Index Only Scan", // only when no index_getnext_slot came first
		"tbm_iterate":                 "Bitmap Heap Scan",
		"tbm_shared_iterate":          "Bitmap Heap Scan",
		"ExecMakeTableFunctionResult": "Function Scan",
	}},
	"ExecAgg": {def: "Aggregate", evidence: map[string]string{
		"agg_retrieve_direct":     "Aggregate",
		"agg_fill_hash_table":     "HashAggregate",
		"agg_retrieve_hash_table": "HashAggregate",
		"lookup_hash_entries":     "HashAggregate",
		"LookupTupleHashEntry":    "HashAggregate",
	}},
	"ExecModifyTable": {def: "ModifyTable", evidence: map[string]string{
		"ExecInsert":        "Insert",
		"ExecUpdate":        "Update",
		"ExecDelete":        "Delete",
		"ExecMerge":         "Merge",
		"heap_insert":       "Insert",
		"heap_multi_insert": "Insert",
		"heap_update":       "Update",
		"heap_delete":       "Delete",
	}},
}

// postgresCallerEvidence names an unknown frame of a stripped build (the
// "[postgres]" that collapsers print for a static function) from its
// direct callee: only a Hash Join calls ExecScanHashBucket, only a Sort
// node feeds tuplesort_puttupleslot from the executor, and so on.
var postgresCallerEvidence = map[string]string{
	"ExecScanHashBucket":            "Hash Join",
	"ExecParallelScanHashBucket":    "Hash Join",
	"ExecScanHashTableForUnmatched": "Hash Join",
	"ExecPrepHashTableForUnmatched": "Hash Join",
	"ExecHashJoinSaveTuple":         "Hash Join",
	"MultiExecHash":                 "Hash Join",
	"ExecHashTableCreate":           "Hash Join",
	"tuplesort_puttupleslot":        "Sort",
	"tuplesort_performsort":         "Sort",
	"tuplesort_gettupleslot":        "Sort",
	"tuplesort_begin_heap":          "Sort",
}

// postgresPassThrough are dispatch frames skipped when looking for a
// direct callee (MultiExecProcNode sits between Hash Join and Hash).
var postgresPassThrough = map[string]bool{
	"MultiExecProcNode": true,
	"ExecProcNode":      true,
	"ExecProcNodeFirst": true,
	"ExecProcNodeInstr": true,
}

// postgresRoots are the executor entry points that root the "plan" view.
var postgresRoots = map[string]string{
	"standard_ExecutorRun": "Executor",
}

// postgresLayers describes PostgreSQL backend functions by name prefix,
// for tooltips and the "plan+layers" view.
var postgresLayers = map[string]string{
	"Exec":                 "executor",
	"ExecInterpExpr":       "expression evaluation (quals, projections)",
	"ExecEval":             "expression evaluation step",
	"ExecScan":             "generic scan loop: fetch a tuple, check quals, project",
	"ExecScanHashBucket":   "hash join probe: search the hash bucket of the outer tuple",
	"ExecHashTableInsert":  "hash join build: insert a tuple into the hash table",
	"ExecHashGetHashValue": "hash a join key",
	"MultiExecHash":        "Hash node: build the whole hash table from its input",
	"standard_ExecutorRun": "executor entry: run a plan to completion or to the fetch count",
	"standard_planner":     "planner",
	"PortalRun":            "run a portal (a statement's execution state)",
	"exec_simple_query":    "simple query protocol: parse, plan, execute",
	"heap_":                "heap access method (table rows)",
	"heapgetpage":          "read a heap page and find its visible tuples",
	"heap_getnextslot":     "sequential scan: next tuple of a heap table",
	"HeapTupleSatisfies":   "MVCC visibility check",
	"index_":               "index access method interface",
	"index_getnext_slot":   "index scan: next heap tuple through the index",
	"index_getnext_tid":    "index scan: next tuple id from the index",
	"_bt":                  "B-tree internals",
	"bt":                   "B-tree access method",
	"tuplesort_":           "tuple sorting (in memory or on disk)",
	"tuplestore_":          "tuple store (materialized rows)",
	"LookupTupleHashEntry": "hash aggregation / hashed set operation lookup",
	"ReadBuffer":           "shared buffers: get a page (reading it if needed)",
	"BufTableLookup":       "shared buffers: buffer mapping lookup",
	"slot_":                "tuple slot: deform columns",
	"palloc":               "memory context allocation",
	"MemoryContext":        "memory contexts",
	"LWLock":               "lightweight locks",
	"XLog":                 "write-ahead log",
	"textlike":             "LIKE on text",
	"hash_search":          "dynamic hash table lookup",
}
