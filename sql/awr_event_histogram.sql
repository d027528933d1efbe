-- awr_event_histogram.sql: AWR wait-event latency histograms as CSV for latscope.
--
-- Prints one row per AWR snapshot, instance, wait event and latency bucket
-- from DBA_HIST_EVENT_HISTOGRAM joined to DBA_HIST_SNAPSHOT:
--   DBID, SNAP_ID, INSTANCE_NUMBER, STARTUP_TIME, BEGIN_INTERVAL_TIME,
--   END_INTERVAL_TIME, WAIT_CLASS, EVENT_NAME, WAIT_TIME_MILLI, WAIT_COUNT
-- WAIT_TIME_MILLI is the bucket's exclusive upper bound in ms (19c also has
-- sub-millisecond buckets, down to 2^-10 ms); WAIT_COUNT is cumulative since
-- instance startup. latscope takes the deltas between consecutive snapshots
-- of each instance and reads a new STARTUP_TIME as a restart.
--
-- Licensing: the AWR views (DBA_HIST_*) need the Oracle Diagnostics Pack.
--
-- Run it with SQL*Plus 12.2 or later (in SQLcl, use "set sqlformat csv"
-- instead of "set markup csv on"), as a user who can read DBA_HIST_* and
-- V$DATABASE, in a non-CDB or the CDB root:
--   sqlplus -s -L user@db @sql/awr_event_histogram.sql "db file sequential read,log file sync" 1200 1300 > awr.csv
--   latscope heatmap awr.csv
--   latscope report awr.csv --event "log file sync"
-- Arguments:
--   1  wait events: exact names separated by commas, or ALL for every event
--   2  first snapshot id
--   3  last snapshot id
-- List the snapshots with:
--   select snap_id, instance_number, end_interval_time from dba_hist_snapshot order by 1, 2;
--
-- Times are printed in the database server's time zone, without an offset:
-- when latscope runs in another zone, give it --tz (e.g. --tz Europe/Zurich).
-- Only the local database is exported (DBID of V$DATABASE); for an AWR
-- repository holding imported databases, replace that condition by a DBID.
-- If latscope reports duplicate rows (AWR of several containers in 12c and
-- later), add "and h.con_dbid = s.dbid" to the join.
--
-- SQL*Plus before 12.2 has no "set markup csv": delete that line. The output
-- is then a fixed-width spool, which latscope reads as well (the settings
-- below keep each row on one line; a heading repeated at a page break and
-- "N rows selected." are skipped).

whenever sqlerror exit sql.sqlcode
set markup csv on
set heading on pagesize 50000 linesize 32767 trimspool on trimout on
set feedback off verify off echo off tab off
set numwidth 20

column dbid                format 99999999999
column snap_id             format 9999999999
column instance_number     format 999999999999999
column startup_time        format a23
column begin_interval_time format a23
column end_interval_time   format a23
column wait_class          format a15
column event_name          format a64
column wait_time_milli     format a20
column wait_count          format a20

select s.dbid,
       s.snap_id,
       s.instance_number,
       to_char(s.startup_time, 'YYYY-MM-DD HH24:MI:SS.FF3') as startup_time,
       to_char(s.begin_interval_time, 'YYYY-MM-DD HH24:MI:SS.FF3') as begin_interval_time,
       to_char(s.end_interval_time, 'YYYY-MM-DD HH24:MI:SS.FF3') as end_interval_time,
       h.wait_class,
       h.event_name,
       to_char(h.wait_time_milli, 'TM9', 'NLS_NUMERIC_CHARACTERS=''.,''') as wait_time_milli,
       to_char(h.wait_count, 'TM9', 'NLS_NUMERIC_CHARACTERS=''.,''') as wait_count
from dba_hist_snapshot s
join dba_hist_event_histogram h
  on h.dbid = s.dbid
 and h.snap_id = s.snap_id
 and h.instance_number = s.instance_number
where s.dbid = (select dbid from v$database)
  and s.snap_id between &2 and &3
  and (upper('&1') = 'ALL'
       or h.event_name in (select trim(regexp_substr('&1', '[^,]+', 1, level))
                           from dual
                           connect by level <= regexp_count('&1', ',') + 1))
order by s.snap_id, s.instance_number, h.event_name, h.wait_time_milli;

exit
