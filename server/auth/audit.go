package auth

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// AuditEvent is one line of the audit log: who did what to what, when,
// from where, and whether it worked.
type AuditEvent struct {
	ID     int64     `json:"id"`
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Action string    `json:"action"` // login, login.fail, login.limited, logout, user.*, token.*, and the server's own
	Target string    `json:"target"`
	Remote string    `json:"remote"`
	OK     bool      `json:"ok"`
	Detail string    `json:"detail,omitempty"`
}

// Audit records an event; the server uses it for job changes and runs too.
func (s *Store) Audit(ctx context.Context, by Actor, action, target string, ok bool, detail string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO auth_audit(at, actor, action, target, remote, ok, detail)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, nanos(s.now()), by.User, action, target, by.Remote, ok, detail)
	if err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	return nil
}

// audit records an event whose action already happened: failing to record
// it must not undo or hide the action, so the error goes to the log. A
// client that hangs up early does not cancel the record of what it did.
func (s *Store) audit(ctx context.Context, by Actor, action, target string, ok bool, detail string) {
	ctx = context.WithoutCancel(ctx)
	if err := s.Audit(ctx, by, action, target, ok, detail); err != nil {
		s.opt.Logger.ErrorContext(ctx, "audit log write failed", "action", action, "err", err)
	}
}

// PruneAudit deletes the audit events older than keep, so the log does not
// grow without end; the server calls it in its maintenance.
func (s *Store) PruneAudit(ctx context.Context, keep time.Duration) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM auth_audit WHERE at < ?`, nanos(s.now().Add(-keep)))
	if err != nil {
		return 0, fmt.Errorf("prune audit log: %w", err)
	}
	return res.RowsAffected()
}

// MaxAuditPage bounds one read of the audit log.
const MaxAuditPage = 1000

// AuditLog returns up to limit events older than before (an event id; 0
// means from the newest), newest first.
func (s *Store) AuditLog(ctx context.Context, before int64, limit int) ([]AuditEvent, error) {
	if limit <= 0 || limit > MaxAuditPage {
		limit = MaxAuditPage
	}
	return queryAll(ctx, s.db, "read audit log", scanAuditEvent, `SELECT id, at, actor, action, target, remote, ok, detail
		FROM auth_audit WHERE ? = 0 OR id < ? ORDER BY id DESC LIMIT ?`, before, before, limit)
}

func scanAuditEvent(rows *sql.Rows) (AuditEvent, error) {
	var e AuditEvent
	var at int64
	err := rows.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.Target, &e.Remote, &e.OK, &e.Detail)
	e.At = fromNanos(at)
	return e, err
}
