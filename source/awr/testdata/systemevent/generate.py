# Generator of the SYNTHETIC AWR system-event extract (see PROVENANCE.md).
import random, datetime
random.seed(18)
events = [("User I/O","db file sequential read",5000,0.9),("Commit","log file sync",3000,1.8),
          ("System I/O","log file parallel write",3200,0.7),("Cluster","gc cr block 2-way",1500,0.4),
          ("Application","enq: TX - row lock contention",20,250.0),("Idle","SQL*Net message from client",20000,30.0)]
start = datetime.datetime(2024,3,11,0,0,0)  # a Monday
print('"DBID","SNAP_ID","INSTANCE_NUMBER","STARTUP_TIME","BEGIN_INTERVAL_TIME","END_INTERVAL_TIME","WAIT_CLASS","EVENT_NAME","TOTAL_WAITS","TIME_WAITED_MICRO"')
fmt = lambda t: t.strftime("%Y-%m-%d %H:%M:%S.000")
for inst in (1,2):
    startup = datetime.datetime(2024,3,1,5,0,12)
    cum = {}
    prev_end = start
    for h in range(7*24+1):
        end = start + datetime.timedelta(hours=h, seconds=inst)
        if inst == 2 and end.date() == datetime.date(2024,3,14) and end.hour == 14:
            startup = end - datetime.timedelta(minutes=40)
            cum = {}
        busy = 1.0 + (2.5 if 8 <= end.hour < 18 and end.weekday() < 5 else 0.0)
        for cls, ev, rate, ms in events:
            if ev.startswith("enq") and (end.hour % 6 != 3):
                if ev not in cum: continue
            elif ev.startswith("enq") or True:
                w = int(rate*busy*random.uniform(0.7,1.3))
                mean = ms*random.uniform(0.8,1.25)*(1.5 if ev.startswith("db file") and end.weekday()==2 else 1.0)
                if not (ev.startswith("enq") and end.hour % 6 != 3):
                    c = cum.get(ev,(0,0))
                    cum[ev] = (c[0]+w, c[1]+int(w*mean*1000))
            c = cum[ev]
            print(f'1234567890,{1000+h},{inst},"{fmt(startup)}","{fmt(prev_end)}","{fmt(end)}","{cls}","{ev}","{c[0]}","{c[1]}"')
        prev_end = end
