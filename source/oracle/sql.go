package oracle

import "fmt"

// The queries, as constants so that tests check the columns the mappers
// read. Binds are positional (go-ora). Times are printed as the text
// source/awr reads (YYYY-MM-DD HH24:MI:SS.FF6TZH:TZM) and counts with TM9 so
// that no NLS setting changes them.

// histogramQueryMicro polls GV$EVENT_HISTOGRAM_MICRO (12.2+). Binds: 1 = the
// events, comma separated; 2 = the instance (0: all). SAMPLE_TIME is one
// SYSTIMESTAMP for the whole statement, so every instance's rows of a poll
// share it; STARTUP_TIME tells restarts. The columns are those of
// sql/gv_event_histogram_micro_poll.sql, so source/awr maps them.
// histogramQueryMilli is the same over GV$EVENT_HISTOGRAM (10g–12.1, ms
// buckets), used when the _MICRO view does not exist.
var (
	histogramQueryMicro = fmt.Sprintf(histogramQuery, "gv$event_histogram_micro", "wait_time_micro")
	histogramQueryMilli = fmt.Sprintf(histogramQuery, "gv$event_histogram", "wait_time_milli")
)

// histogramQuery is both histogram polls: %[1]s is the view, %[2]s its
// bucket bound column.
const histogramQuery = `with p as (select :1 as events, :2 as inst, systimestamp as ts from dual)
select to_char(p.ts, 'YYYY-MM-DD HH24:MI:SS.FF6TZH:TZM') as sample_time,
       h.inst_id,
       to_char(i.startup_time, 'YYYY-MM-DD HH24:MI:SS') as startup_time,
       h.event,
       to_char(h.%[2]s, 'TM9', 'NLS_NUMERIC_CHARACTERS=''.,''') as %[2]s,
       to_char(h.wait_count, 'TM9', 'NLS_NUMERIC_CHARACTERS=''.,''') as wait_count
from p
cross join %[1]s h
join gv$instance i on i.inst_id = h.inst_id
where (p.inst = 0 or h.inst_id = p.inst)
  and h.event in (select trim(regexp_substr(p.events, '[^,]+', 1, level)) from dual
                  connect by level <= regexp_count(p.events, ',') + 1)
order by h.inst_id, h.event, h.%[2]s`

// systemEventQuery reads the exact totals beside the buckets. Binds as above.
const systemEventQuery = `with p as (select :1 as events, :2 as inst from dual)
select e.inst_id, e.event, e.total_waits, e.time_waited_micro
from p
cross join gv$system_event e
where (p.inst = 0 or e.inst_id = p.inst)
  and e.event in (select trim(regexp_substr(p.events, '[^,]+', 1, level)) from dual
                  connect by level <= regexp_count(p.events, ',') + 1)`

// kslwhQuery reads the last 10 completed waits of the selected sessions from
// X$KSLWH (needs SYS; the fixed table behind V$SESSION_WAIT_HISTORY, column
// names as in the seed, 000_bc1fd9b6160af165.txt). KSLWHWAITID numbers a
// session's waits; KSLWHETIME is the wait's duration in µs. SERIAL# from
// V$SESSION tells a new session on a reused SID. %s is the --sessions
// condition on V$SESSION (default: user sessions).
const kslwhQuery = `select w.kslwhsid as sid, s.serial# as serial, w.kslwhwaitid as wait_id,
       w.kslwhetext as event, w.kslwhetime as wait_time_micro,
       w.kslwhp1 as p1, w.kslwhp2 as p2, w.kslwhp3 as p3
from x$kslwh w
join v$session s on s.sid = w.kslwhsid
where (%s)`

// sessionWaitHistoryQuery is the fallback without SYS: V$SESSION_WAIT_HISTORY
// (SEQ# = ring position, 1 = most recent) joined to V$SESSION_WAIT, whose
// SEQ# counts the session's waits and whose STATE says whether the counted
// wait is still in progress (WAITING: not yet in the history).
const sessionWaitHistoryQuery = `select h.sid, s.serial# as serial, h.seq# as position, w.seq# as wait_seq, w.state,
       h.event, h.wait_time_micro, h.p1, h.p2, h.p3
from v$session_wait_history h
join v$session_wait w on w.sid = h.sid
join v$session s on s.sid = h.sid
where (%s)`

// defaultSessions selects user sessions when --sessions is not given.
const defaultSessions = "s.type = 'USER'"

// awrSnapshotQuery reads DBA_HIST_SNAPSHOT for the current database (DBID
// of V$DATABASE). Binds: 1, 2 = --awr-from, --awr-to (SNAP_IDs, inclusive);
// 3 = --awr-last N (0: use the range), which selects the last N+1 SNAP_IDs so
// that N deltas exist. AWR times are TIMESTAMPs without zone (the server's
// local time): DB_UTC_OFFSET is the server's current offset to read them in
// when --tz is not given.
const awrSnapshotQuery = `with p as (select :1 as snap_from, :2 as snap_to, :3 as last_n from dual),
s as (select s.snap_id, s.dbid, s.instance_number, s.begin_interval_time, s.end_interval_time, s.startup_time,
             dense_rank() over (order by s.snap_id desc) as snap_rank
      from dba_hist_snapshot s
      where s.dbid = (select dbid from v$database))
select s.snap_id, s.dbid, s.instance_number,
       to_char(s.begin_interval_time, 'YYYY-MM-DD HH24:MI:SS.FF3') as begin_interval_time,
       to_char(s.end_interval_time, 'YYYY-MM-DD HH24:MI:SS.FF3') as end_interval_time,
       to_char(s.startup_time, 'YYYY-MM-DD HH24:MI:SS.FF3') as startup_time,
       to_char(systimestamp, 'TZH:TZM') as db_utc_offset
from p
cross join s
where (p.last_n > 0 and s.snap_rank <= p.last_n + 1)
   or (p.last_n = 0 and s.snap_id between p.snap_from and p.snap_to)
order by s.snap_id, s.instance_number`

// awrHistogramQuery reads DBA_HIST_EVENT_HISTOGRAM for the snapshots found
// by awrSnapshotQuery. Binds: 1, 2 = the smallest and largest SNAP_ID;
// 3 = the DBID; 4 = the events, comma separated. WAIT_TIME_MILLI is printed
// with TM9 so that 19c's sub-millisecond bounds (2^-10 ms) stay exact.
const awrHistogramQuery = `with p as (select :1 as snap_from, :2 as snap_to, :3 as dbid, :4 as events from dual)
select h.snap_id, h.dbid, h.instance_number, h.event_name, h.wait_class,
       to_char(h.wait_time_milli, 'TM9', 'NLS_NUMERIC_CHARACTERS=''.,''') as wait_time_milli,
       to_char(h.wait_count, 'TM9', 'NLS_NUMERIC_CHARACTERS=''.,''') as wait_count
from p
cross join dba_hist_event_histogram h
where h.dbid = p.dbid
  and h.snap_id between p.snap_from and p.snap_to
  and h.event_name in (select trim(regexp_substr(p.events, '[^,]+', 1, level)) from dual
                       connect by level <= regexp_count(p.events, ',') + 1)
order by h.snap_id, h.instance_number, h.event_name, h.wait_time_milli`

// awrSystemEventQuery reads DBA_HIST_SYSTEM_EVENT for the snapshots found
// by awrSnapshotQuery, for `latscope awr oracle://...`: the columns of
// sql/awr_system_event.sql that the snapshot query does not give. Binds:
// 1, 2 = the smallest and largest SNAP_ID; 3 = the DBID. Counters are
// printed with TM9, NLS-proof and exact.
const awrSystemEventQuery = `with p as (select :1 as snap_from, :2 as snap_to, :3 as dbid from dual)
select e.snap_id, e.dbid, e.instance_number, e.wait_class, e.event_name,
       to_char(e.total_waits, 'TM9', 'NLS_NUMERIC_CHARACTERS=''.,''') as total_waits,
       to_char(e.time_waited_micro, 'TM9', 'NLS_NUMERIC_CHARACTERS=''.,''') as time_waited_micro
from p
cross join dba_hist_system_event e
where e.dbid = p.dbid
  and e.snap_id between p.snap_from and p.snap_to
order by e.instance_number, e.snap_id, e.event_name`
