package decode

import (
	"bytes"
	"strings"
	"testing"

	"github.com/latscope/latscope/flame"
)

func folded(t *testing.T, p *flame.Profile) string {
	t.Helper()
	var b bytes.Buffer
	if err := p.WriteFolded(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// oracleStacks is SYNTHETIC: folded stacks built from the frame names
// printed in the seeds (the perf report and gdb stacks of a
// "select avg(..)" full scan in seed 004: opifch2 > qergsFetch >
// qertbFetch > kdsttgr > kdstf00001010000000km > kdst_fetch > kcbgtcr),
// plus a 12c hash join with a bloom filter and a direct read ending in
// Linux kernel frames, as stackcollapse-perf.pl folds them (no "_[k]").
var oracleStacks = []struct {
	frames string
	count  int64
}{
	{"oracle_1234;opiodr;opifch2;qergsFetch;qertbFetch;kdsttgr;kdstf00001010000000km;kdst_fetch;kdst_fetch0;kcbgtcr", 40},
	{"oracle_1234;opiodr;opifch2;qergsFetch;qertbFetch;kdsttgr;kdstf00001010000000km;qesaAggNonDistSS", 10},
	{"oracle_1234;opiodr;opifch2;qergsFetch;qeaeAvg", 2},
	{"oracle_1234;opiodr;opiexe;qerhnFetch;qerblFetch;qertbFetchByRowID;kdsgrp;kcbgtcr", 7},
	{"oracle_1234;opiodr;opifch2;qercbiFetch;qercbFetch;__PGOSF12_qerixtFetch;kdifxs", 3},
	{"oracle_1234;opiodr;opifch2;qertbFetch;kcbldrget;ksfdread;pread64;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_pread64;kmem_cache_alloc", 5},
	{"oracle_1234;opiodr;opifch2;qertbFetch;kcbgtcr;kfree_[k]", 1},
	{"oracle_1234;sskgpwwait;semtimedop", 4},
}

func oracleProfile() *flame.Profile {
	p := flame.New()
	for _, s := range oracleStacks {
		p.Add(s.frames, s.count)
	}
	return p
}

func TestOracleRenameKeepsEveryFrame(t *testing.T) {
	got := Apply(oracleProfile(), Options{DB: Oracle})
	want := `oracle_1234;opiodr;FETCH (opifch2);CONNECT BY SUPPORT (qercbiFetch);CONNECT BY (qercbFetch);INDEX (__PGOSF12_qerixtFetch);kdifxs 3
oracle_1234;opiodr;FETCH (opifch2);SORT GROUP BY (qergsFetch);TABLE ACCESS (qertbFetch);kdsttgr;kdstf00001010000000km;kdst_fetch;kdst_fetch0;kcbgtcr 40
oracle_1234;opiodr;FETCH (opifch2);SORT GROUP BY (qergsFetch);TABLE ACCESS (qertbFetch);kdsttgr;kdstf00001010000000km;qesaAggNonDistSS 10
oracle_1234;opiodr;FETCH (opifch2);SORT GROUP BY (qergsFetch);qeaeAvg 2
oracle_1234;opiodr;FETCH (opifch2);TABLE ACCESS (qertbFetch);kcbgtcr;kfree_[k] 1
oracle_1234;opiodr;FETCH (opifch2);TABLE ACCESS (qertbFetch);kcbldrget;ksfdread;pread64;entry_SYSCALL_64_after_hwframe;do_syscall_64;ksys_pread64;kmem_cache_alloc 5
oracle_1234;opiodr;opiexe;HASH JOIN (qerhnFetch);JOIN FILTER (qerblFetch);TABLE ACCESS BY ROWID (qertbFetchByRowID);kdsgrp;kcbgtcr 7
oracle_1234;sskgpwwait;semtimedop 4
`
	if g := folded(t, got); g != want {
		t.Errorf("got:\n%s\nwant:\n%s", g, want)
	}
}

func TestOraclePlanView(t *testing.T) {
	p := oracleProfile()
	got := Apply(p, Options{DB: Oracle, View: ViewPlan})
	want := `FETCH (opifch2);CONNECT BY SUPPORT (qercbiFetch);CONNECT BY (qercbFetch);INDEX (__PGOSF12_qerixtFetch) 3
FETCH (opifch2);SORT GROUP BY (qergsFetch) 2
FETCH (opifch2);SORT GROUP BY (qergsFetch);TABLE ACCESS (qertbFetch) 50
FETCH (opifch2);TABLE ACCESS (qertbFetch) 6
HASH JOIN (qerhnFetch);JOIN FILTER (qerblFetch);TABLE ACCESS BY ROWID (qertbFetchByRowID) 7
`
	if g := folded(t, got); g != want {
		t.Errorf("got:\n%s\nwant:\n%s", g, want)
	}
	// The wait stack has no plan frame: dropped, or kept under Other.
	if got.Total() != p.Total()-4 {
		t.Errorf("plan total %d, want %d", got.Total(), p.Total()-4)
	}
	other := Apply(p, Options{DB: Oracle, View: ViewPlan, Other: "(not in plan)"})
	if other.Total() != p.Total() || !strings.Contains(folded(t, other), "(not in plan) 4\n") {
		t.Errorf("Other: %s", folded(t, other))
	}
}

func TestOraclePlanLayersNeverTakesLinuxForOracle(t *testing.T) {
	got := folded(t, Apply(oracleProfile(), Options{DB: Oracle, View: ViewPlanLayers}))
	want := `FETCH (opifch2);CONNECT BY SUPPORT (qercbiFetch);CONNECT BY (qercbFetch);INDEX (__PGOSF12_qerixtFetch);kdifxs 3
FETCH (opifch2);SORT GROUP BY (qergsFetch) 2
FETCH (opifch2);SORT GROUP BY (qergsFetch);TABLE ACCESS (qertbFetch);kdsttgr;kdstf00001010000000km 10
FETCH (opifch2);SORT GROUP BY (qergsFetch);TABLE ACCESS (qertbFetch);kdsttgr;kdstf00001010000000km;kdst_fetch;kdst_fetch0;kcbgtcr 40
FETCH (opifch2);TABLE ACCESS (qertbFetch);kcbgtcr 1
FETCH (opifch2);TABLE ACCESS (qertbFetch);kcbldrget;ksfdread 5
opiexe;HASH JOIN (qerhnFetch);JOIN FILTER (qerblFetch);TABLE ACCESS BY ROWID (qertbFetchByRowID);kdsgrp;kcbgtcr 7
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	for _, linux := range []string{"ksys_pread64", "kmem_cache_alloc", "kfree"} {
		if strings.Contains(got, linux) {
			t.Errorf("Linux kernel function %s kept as an Oracle layer", linux)
		}
	}
}

// TestMarkedFrames: with perf input the collapser marks the oracle
// binary's frames; a "k" function of another module (here a synthetic
// libkfoo.so) is not decoded.
func TestMarkedFrames(t *testing.T) {
	mark := MarkFrame(Oracle)
	frames := []string{
		mark("opifch2", "/u01/app/oracle/product/19.0.0/dbhome_1/bin/oracle"),
		mark("qertbFetch", "/u01/app/oracle/product/19.0.0/dbhome_1/bin/oracle"),
		mark("kfoo_read", "/usr/lib/libkfoo.so"),
		mark("kcbgtcr", "/u01/app/oracle/product/19.0.0/dbhome_1/bin/oracle"),
	}
	p := flame.New()
	p.Add(strings.Join(frames, ";"), 3)
	if g := folded(t, Apply(p, Options{DB: Oracle, Marked: true})); g != "FETCH (opifch2);TABLE ACCESS (qertbFetch);kfoo_read;kcbgtcr 3\n" {
		t.Errorf("marked: %q", g)
	}
	if g := folded(t, Apply(p, Options{DB: Oracle, Marked: true, View: ViewPlanLayers})); g != "FETCH (opifch2);TABLE ACCESS (qertbFetch);kcbgtcr 3\n" {
		t.Errorf("marked plan+layers: %q", g)
	}
}

func TestLongestPrefixIsAnchoredAndUnique(t *testing.T) {
	for prefix := range oracleRowsources {
		if !strings.HasPrefix(prefix, "qer") {
			t.Errorf("rowsource prefix %q is not a qer* function", prefix)
		}
	}
	cases := map[string]string{
		"qercbiFetch":       "CONNECT BY SUPPORT",
		"qercbFetch":        "CONNECT BY",
		"qerjotFetch":       "NESTED LOOPS",
		"qerjoFetch":        "NESTED LOOPS OUTER",
		"qerhnFetch":        "HASH JOIN",
		"qerscFetch":        "STATISTICS COLLECTOR",
		"qertbFetchByRowID": "TABLE ACCESS BY ROWID",
		"qertbStart":        "TABLE ACCESS",
	}
	for fn, op := range cases {
		if f := decodeOracle(fn); f.name != op+" ("+fn+")" {
			t.Errorf("%s → %q, want %s", fn, f.name, op)
		}
	}
	// Anchored: a name merely containing a prefix is not decoded.
	if f := decodeOracle("xqertbFetch"); f.kind != kindOther || f.name != "xqertbFetch" {
		t.Errorf("unanchored match: %+v", f)
	}
	// Unknown qer* functions stay rowsources, undecoded.
	if f := decodeOracle("qerzzFetch"); f.kind != kindPlan || f.name != "qerzzFetch" {
		t.Errorf("unknown rowsource: %+v", f)
	}
}

func TestDescribe(t *testing.T) {
	cases := []struct{ db, frame, want string }{
		{Oracle, "kcbgtcr", "Oracle kernel > cache and recovery layer > buffer cache: finding, pinning and reading data blocks > get a block in consistent-read mode (logical read)"},
		{Oracle, "HASH JOIN (qerhnFetch)", "query execution rowsource (an operation of the execution plan) > plan operation HASH JOIN (rowsource qerhn)"},
		{Oracle, "kfree_[k]", ""},
		{Oracle, "semtimedop", ""},
		{Postgres, "Seq Scan (ExecScan)", "generic scan loop: fetch a tuple, check quals, project"},
		{Postgres, "ExecHashJoin", "plan node Hash Join; executor"},
		{"mysql", "kcbgtcr", ""},
	}
	for _, c := range cases {
		if got := Describe(c.db, c.frame); got != c.want {
			t.Errorf("Describe(%s, %s) = %q, want %q", c.db, c.frame, got, c.want)
		}
	}
	if d := Describe(Oracle, "qerjotFetch"); !strings.Contains(d, "join tunneling") {
		t.Errorf("qerjot note missing: %q", d)
	}
}

// TestPostgresStaticNames is SYNTHETIC: stacks of a PostgreSQL built with
// symbols (static executor functions visible), as perf folds them.
func TestPostgresStaticNames(t *testing.T) {
	p := flame.New()
	p.Add("postgres;PostgresMain;exec_simple_query;PortalRun;standard_ExecutorRun;ExecutePlan;ExecAgg;agg_fill_hash_table;ExecHashJoin;ExecScan;SeqNext;heap_getnextslot;heapgettup_pagemode", 6)
	p.Add("postgres;PostgresMain;exec_simple_query;PortalRun;standard_ExecutorRun;ExecutePlan;ExecAgg;agg_fill_hash_table;ExecHashJoin;MultiExecProcNode;MultiExecHash;ExecScan;IndexNext;index_getnext_slot;btgettuple", 3)
	p.Add("postgres;PostgresMain;exec_simple_query;PortalRun;standard_ExecutorRun;ExecutePlan;ExecAgg;agg_fill_hash_table;ExecHashJoin;ExecScan;ExecInterpExpr", 2)
	p.Add("postgres;PostgresMain;exec_simple_query;PortalRun;standard_ExecutorRun;ExecutePlan;ExecModifyTable;ExecInsert;heap_insert", 1)
	p.Add("postgres;PostgresMain;exec_simple_query;pg_plan_queries;standard_planner;systable_getnext;heap_getnextslot", 1)
	got := folded(t, Apply(p, Options{DB: Postgres, View: ViewPlan}))
	want := `Executor (standard_ExecutorRun);HashAggregate (ExecAgg);Hash Join (ExecHashJoin);Hash (MultiExecHash);Index Scan (ExecScan) 3
Executor (standard_ExecutorRun);HashAggregate (ExecAgg);Hash Join (ExecHashJoin);Seq Scan (ExecScan) 8
Executor (standard_ExecutorRun);Insert (ExecModifyTable) 1
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestValidate(t *testing.T) {
	for _, o := range []Options{{DB: "mysql"}, {DB: Oracle, View: "tree"}} {
		if o.Validate() == nil {
			t.Errorf("%+v accepted", o)
		}
		p := flame.New()
		p.Add("a;b", 1)
		if Apply(p, o) != p {
			t.Errorf("%+v: invalid options changed the profile", o)
		}
	}
	if IsDBModule(Postgres, "/usr/lib/postgresql/15/lib/plpgsql.so") || !IsDBModule(Postgres, "/usr/lib/postgresql/15/bin/postgres") {
		t.Error("IsDBModule")
	}
}
