package dbtest

import (
	"database/sql"
	"testing"
)

func TestStartMariaDB(t *testing.T) {
	m := StartMariaDB(t, MariaDBOptions{})
	db, err := sql.Open("mysql", m.DSN("latscope"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ps int
	if err := db.QueryRow("SELECT @@performance_schema").Scan(&ps); err != nil {
		t.Fatal(err)
	}
	if ps != 1 {
		t.Errorf("performance_schema = %d, want 1", ps)
	}
	m.Stop(t)
	if err := db.Ping(); err == nil {
		t.Errorf("server still answers after Stop")
	}
	m.Start(t)
	if err := db.Ping(); err != nil {
		t.Errorf("after restart: %v", err)
	}
}
