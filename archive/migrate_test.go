package archive

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/stream"
)

// migrationInput is what testdata/v1/latscope.db and testdata/v2/latscope.db
// hold: the real sample and an hour and 6 minutes of 1-second intervals of
// two series, written by the schema-1 archive (one row per window and per
// point) and by the schema-2 one (1 024 intervals per transaction: the
// first hour of "db" packed into WITHOUT ROWID block tables), in the order
// Read returns them (by source).
func migrationInput(t testing.TB) []stream.Interval {
	t.Helper()
	ivs := realIntervals(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ivs = append(ivs, synthetic("db", t0, 4000, 2, realHistograms(t))...)
	slices.SortStableFunc(ivs, func(a, b stream.Interval) int { return strings.Compare(a.Source, b.Source) })
	return ivs
}

// copyV1 copies the schema-1 archive into a fresh data directory.
func copyV1(t *testing.T) string { return copyOld(t, "v1") }

// copyOld copies an archive of an older schema into a fresh data
// directory.
func copyOld(t *testing.T, version string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", version, DBName))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, DBName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func blockCount(t testing.TB, a *Archive) int {
	t.Helper()
	var n int
	if err := a.db.QueryRow("SELECT count(*) FROM window_blocks").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMigrateFromV1 opens an archive written by schema 1: read-only it
// reads as written; opened for writing it is migrated, reads the same, and
// the next write packs its finished hours.
func TestMigrateFromV1(t *testing.T) {
	want := migrationInput(t)
	dir := copyV1(t)
	r, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	sameIntervals(t, readAll(t, r, Query{Resolution: Raw}), want)
	r.Close()

	a := openMigrated(t, dir)
	sameIntervals(t, readAll(t, a, Query{Resolution: Raw}), want)
	if n := blockCount(t, a); n != 0 {
		t.Fatalf("%d blocks before any write", n)
	}

	// The next writes of "db" (in its second hour) pack its first hour, a
	// series per write (both within one write's budget of points would be
	// 7 200); the real sample's source is packed by its own next writes.
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	next := synthetic("db", t0.Add(4000*time.Second), 2, 2, realHistograms(t))
	for i, iv := range next {
		if err := a.Write(ctx, iv); err != nil {
			t.Fatal(err)
		}
		if n := blockCount(t, a); n != i {
			t.Fatalf("%d window blocks after %d writes, want %d", n, i+1, i)
		}
	}
	want = migrationInput(t)
	want = slices.Insert(want, 4000, next...) // "db" reads first
	sameIntervals(t, readAll(t, a, Query{Resolution: Raw}), want)

	// Writing everything again, packed hours included, doubles nothing.
	if err := a.WriteBatch(ctx, want); err != nil {
		t.Fatal(err)
	}
	sameIntervals(t, readAll(t, a, Query{Resolution: Raw}), want)
}

// TestMigrateFromV2 opens an archive written by schema 2 (blocks in
// WITHOUT ROWID tables): read-only it reads as written; opened for writing
// its blocks move to the rowid tables of schema 3, it reads the same, and
// writing goes on, rewrites of the packed hour included.
func TestMigrateFromV2(t *testing.T) {
	want := migrationInput(t)
	dir := copyOld(t, "v2")
	r, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := r.schemaVersion(ctx); err != nil || v != 2 {
		t.Fatalf("testdata/v2 has schema %d, %v", v, err)
	}
	sameIntervals(t, readAll(t, r, Query{Resolution: Raw}), want)
	r.Close()

	a := openMigrated(t, dir)
	if err := a.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
	if n := blockCount(t, a); n != 1 {
		t.Fatalf("%d window blocks after migrating, want db's first hour", n)
	}
	var withoutRowid int
	if err := a.db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE name LIKE '%blocks' AND sql LIKE '%WITHOUT ROWID%'").Scan(&withoutRowid); err != nil || withoutRowid != 0 {
		t.Fatalf("%d block tables still WITHOUT ROWID, %v", withoutRowid, err)
	}
	sameIntervals(t, readAll(t, a, Query{Resolution: Raw}), want)
	// Writing everything again, the packed hour included, doubles nothing.
	if err := a.WriteBatch(ctx, want); err != nil {
		t.Fatal(err)
	}
	sameIntervals(t, readAll(t, a, Query{Resolution: Raw}), want)
}

// TestRewriteIntoPackedHour replaces one interval of a packed hour: the
// hour is unpacked, the interval replaced (a series it lost goes) and the
// hour packed again by the next writes.
func TestRewriteIntoPackedHour(t *testing.T) {
	a, _ := openTemp(t, Options{})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	want := synthetic("db", t0, 3700, 3, realHistograms(t))
	if err := a.WriteBatch(ctx, want); err != nil {
		t.Fatal(err)
	}
	if n := blockCount(t, a); n != 1 {
		t.Fatalf("%d blocks, want the first hour", n)
	}
	again := want[1800]
	again.Series = again.Series[1:]
	again.Duration = 2 * time.Second
	if err := a.Write(ctx, again); err != nil {
		t.Fatal(err)
	}
	want[1800] = again
	// The hour is packed again a series per write: it reads the same at
	// every step, some series packed and others rows.
	for n := 0; blockCount(t, a) == 0; n++ {
		sameIntervals(t, readAll(t, a, Query{Resolution: Raw}), want)
		if n == 4 {
			t.Fatal("the hour of 3 series was not packed again after 4 writes")
		}
		if n == 1 {
			// A rewrite into the partly packed hour unpacks it again.
			want[1900].Duration = 3 * time.Second
			if err := a.Write(ctx, want[1900]); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := a.Write(ctx, want[len(want)-1]); err != nil {
			t.Fatal(err)
		}
	}
	sameIntervals(t, readAll(t, a, Query{Resolution: Raw}), want)
	// A window inside the packed hour reads exactly.
	sameIntervals(t, readAll(t, a, Query{Resolution: Raw, From: t0.Add(1799 * time.Second), To: t0.Add(1802 * time.Second)}), want[1799:1802])
}

// TestPackBudget: a write packs at most its budget of points (beyond one
// series-hour); the hours left stay rows, read the same, and are packed by
// the next writes.
func TestPackBudget(t *testing.T) {
	a, _ := openTemp(t, Options{})
	a.packBudget, a.packPerWritten = 1, 0
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	want := synthetic("db", t0, 4*3600+1, 1, realHistograms(t))
	if err := a.WriteBatch(ctx, want); err != nil {
		t.Fatal(err)
	}
	for packed := 1; packed <= 4; packed++ {
		if got := blockCount(t, a); got != packed {
			t.Fatalf("%d hours packed, want %d", got, packed)
		}
		sameIntervals(t, readAll(t, a, Query{Resolution: Raw}), want)
		// Writing the open hour's interval again packs one more hour.
		if err := a.Write(ctx, want[len(want)-1]); err != nil {
			t.Fatal(err)
		}
	}
}

// openMigrated opens an old archive as a writer, which migrates it, and
// wants the current schema.
func openMigrated(t *testing.T, dir string) *Archive {
	t.Helper()
	a, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if v, err := a.schemaVersion(ctx); err != nil || v != len(migrations) {
		t.Fatalf("schema version %d after migration, %v", v, err)
	}
	return a
}
