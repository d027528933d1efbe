-- gv_event_histogram_poll_repeat.sql: 60 more polls for gv_event_histogram_micro_poll.sql.
--
-- SQL*Plus has no loop statement. "/" runs the statement in the SQL buffer
-- again, and EXEC (an SQL*Plus command) does not replace it, so each pair
-- below sleeps and polls once more (as PyLatencyMap's wait_and_repeat.sql
-- does). gv_event_histogram_micro_poll.sql calls this file 60 times.
-- Oracle 12.2 and older: dbms_lock.sleep instead of dbms_session.sleep.

exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
exec dbms_session.sleep(&poll_seconds)
/
