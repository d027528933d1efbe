-- awr_system_event.sql: AWR wait-event totals per snapshot as CSV for `latscope awr`.
--
-- Prints one row per AWR snapshot, instance and wait event from
-- DBA_HIST_SYSTEM_EVENT joined to DBA_HIST_SNAPSHOT:
--   DBID, SNAP_ID, INSTANCE_NUMBER, STARTUP_TIME, BEGIN_INTERVAL_TIME,
--   END_INTERVAL_TIME, WAIT_CLASS, EVENT_NAME, TOTAL_WAITS, TIME_WAITED_MICRO
-- TOTAL_WAITS and TIME_WAITED_MICRO are cumulative since instance startup:
-- latscope takes the deltas between consecutive snapshots of each instance
-- (a new STARTUP_TIME is a restart, never a negative delta) and builds the
-- top events per snapshot, by wait class and per instance, the hour-of-day x
-- day-of-week pivot and the trends of the top events (docs/awr.md).
-- Idle events are exported too; `latscope awr` leaves them out unless --idle.
--
-- Licensing: the AWR views (DBA_HIST_*) need the Oracle Diagnostics Pack.
--
-- Run it with SQL*Plus 12.2 or later (in SQLcl, use "set sqlformat csv"
-- instead of "set markup csv on"), as a user who can read DBA_HIST_* and
-- V$DATABASE, in a non-CDB or the CDB root:
--   sqlplus -s -L user@db @sql/awr_system_event.sql 1200 1300 > awr_system_event.csv
--   latscope awr awr_system_event.csv -o awr.html
-- Arguments:
--   1  first snapshot id
--   2  last snapshot id
-- Times are printed in the database server's time zone, without an offset:
-- the hour-of-day pivot is in that zone unless latscope is given --tz.
-- Before 12.2, delete the "set markup csv on" line: the fixed-width spool is
-- read as well.

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
column total_waits         format a20
column time_waited_micro   format a20

select e.dbid, e.snap_id, e.instance_number,
       to_char(s.startup_time, 'YYYY-MM-DD HH24:MI:SS.FF3') as startup_time,
       to_char(s.begin_interval_time, 'YYYY-MM-DD HH24:MI:SS.FF3') as begin_interval_time,
       to_char(s.end_interval_time, 'YYYY-MM-DD HH24:MI:SS.FF3') as end_interval_time,
       e.wait_class,
       e.event_name,
       to_char(e.total_waits, 'TM9', 'NLS_NUMERIC_CHARACTERS=''.,''') as total_waits,
       to_char(e.time_waited_micro, 'TM9', 'NLS_NUMERIC_CHARACTERS=''.,''') as time_waited_micro
from   dba_hist_system_event e
join   dba_hist_snapshot s
  on   s.dbid = e.dbid and s.instance_number = e.instance_number and s.snap_id = e.snap_id
where  e.dbid = (select dbid from v$database)
  and  e.snap_id between &1 and &2
order  by e.instance_number, e.snap_id, e.event_name;

exit
