-- gv_event_histogram_micro_poll.sql: poll GV$EVENT_HISTOGRAM_MICRO for latscope.
--
-- Prints, every N seconds, the microsecond wait histograms of the chosen
-- events on every instance as CSV, one row per instance, event and bucket:
--   SAMPLE_TIME, INST_ID, STARTUP_TIME, EVENT, WAIT_TIME_MICRO, WAIT_COUNT
-- WAIT_TIME_MICRO is the bucket's exclusive upper bound in µs; WAIT_COUNT is
-- cumulative since instance startup. latscope takes the deltas between polls
-- of each instance and reads a new STARTUP_TIME as a restart. SAMPLE_TIME
-- carries the server's UTC offset, so no --tz is needed.
--
-- Needs Oracle 18c or later as written (GV$EVENT_HISTOGRAM_MICRO appeared in
-- 12.2, DBMS_SESSION.SLEEP in 18c), SQL*Plus 12.2 or later for "set markup
-- csv on" (in SQLcl, use "set sqlformat csv" instead), and SELECT on
-- GV$EVENT_HISTOGRAM_MICRO and GV$INSTANCE; no licensed pack.
--
-- Run it into a file, then draw it:
--   sqlplus -s -L user@db @sql/gv_event_histogram_micro_poll.sql "db file sequential read" 10 > poll.csv
--   latscope heatmap poll.csv
-- or watch it live (give the password on the command line or in a wallet:
-- a password prompt would go into the pipe):
--   sqlplus -s -L user/password@db @sql/gv_event_histogram_micro_poll.sql "log file sync,log file parallel write" 3 | latscope heatmap -
-- Arguments:
--   1  wait events: exact names separated by commas, or ALL for every event
--   2  seconds between polls
-- It polls 3601 times (gv_event_histogram_poll_repeat.sql, beside this file,
-- repeats the query); Ctrl-C ends SQL*Plus.
--
-- If latscope reports duplicate rows (a set of rows per container in a CDB),
-- add "and h.con_id = 0" to the where clause (12c and later).
-- Oracle 12.2: replace dbms_session.sleep by dbms_lock.sleep in
-- gv_event_histogram_poll_repeat.sql (needs EXECUTE on DBMS_LOCK).
-- Oracle 11g and 12.1 (no _MICRO view): use gv$event_histogram and
-- wait_time_milli (millisecond buckets) instead of gv$event_histogram_micro
-- and wait_time_micro, dbms_lock.sleep as above, and delete
-- "set markup csv on": latscope reads the fixed-width spool as well.

whenever sqlerror exit sql.sqlcode
set markup csv on
set heading on pagesize 50000 linesize 32767 trimspool on trimout on
set feedback off verify off echo off tab off
set numwidth 20

define events = "&1"
define poll_seconds = "&2"

column sample_time     format a32
column inst_id         format 9999999
column startup_time    format a19
column event           format a64
column wait_time_micro format a20
column wait_count      format a20

-- SYSTIMESTAMP is read once, from DUAL, so that every row of a poll,
-- whichever instance it comes from, carries the same SAMPLE_TIME.
select to_char(t.ts, 'YYYY-MM-DD HH24:MI:SS.FF6TZH:TZM') as sample_time,
       h.inst_id,
       to_char(i.startup_time, 'YYYY-MM-DD HH24:MI:SS') as startup_time,
       h.event,
       to_char(h.wait_time_micro, 'TM9', 'NLS_NUMERIC_CHARACTERS=''.,''') as wait_time_micro,
       to_char(h.wait_count, 'TM9', 'NLS_NUMERIC_CHARACTERS=''.,''') as wait_count
from (select systimestamp as ts from dual) t
cross join gv$event_histogram_micro h
join gv$instance i
  on i.inst_id = h.inst_id
where (upper('&events') = 'ALL'
       or h.event in (select trim(regexp_substr('&events', '[^,]+', 1, level))
                      from dual
                      connect by level <= regexp_count('&events', ',') + 1))
order by h.inst_id, h.event, h.wait_time_micro;

-- 60 x 60 more polls.
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql
@@gv_event_histogram_poll_repeat.sql

exit
