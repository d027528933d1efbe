package stream

import "strings"

// idleEvents are Oracle wait events of the Idle wait class that show up in
// traces and event histograms: time spent waiting for work, not for a
// resource. Views put them last so that the default series is a real wait.
var idleEvents = map[string]bool{
	"sql*net message from client":                  true,
	"sql*net more data from client":                true,
	"single-task message":                          true,
	"pipe get":                                     true,
	"pl/sql lock timer":                            true,
	"rdbms ipc message":                            true,
	"pmon timer":                                   true,
	"smon timer":                                   true,
	"dispatcher timer":                             true,
	"virtual circuit wait":                         true,
	"virtual circuit next request":                 true,
	"shared server idle wait":                      true,
	"jobq slave wait":                              true,
	"px idle wait":                                 true,
	"px deq: execution msg":                        true,
	"px deq: table q normal":                       true,
	"class slave wait":                             true,
	"wait for unread message on broadcast channel": true,
	"wait for unread message on multiple broadcast channels": true,
	"ges remote message":             true,
	"gcs remote message":             true,
	"heartbeat monitor sleep":        true,
	"lreg timer":                     true,
	"pman timer":                     true,
	"dbrm logical idle wait":         true,
	"watchdog main loop":             true,
	"space manager: slave idle wait": true,
	"aqpc idle":                      true,
	"streams aq: waiting for messages in the queue": true,
	"streams aq: qmn coordinator idle wait":         true,
	"streams aq: qmn slave idle wait":               true,
	"streams aq: emn coordinator idle wait":         true,
	"fbda: sleep":                                   true,
	"ofs idle":                                      true,
	"lms idle":                                      true,
}

// IsIdleEvent reports whether a wait event is idle time (waiting for the
// client or for work) rather than a wait on a resource.
func IsIdleEvent(event string) bool {
	e := strings.ToLower(strings.TrimSpace(event))
	if idleEvents[e] {
		return true
	}
	return strings.HasPrefix(e, "sql*net message from client")
}
