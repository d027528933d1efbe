package cluster

import "strings"

// waitClasses maps the common 10046 wait events to Oracle's wait classes
// (V$EVENT_NAME.WAIT_CLASS). Events not listed fall to prefixRules, then to
// Other.
var waitClasses = map[string]string{
	"db file sequential read":                       "User I/O",
	"db file scattered read":                        "User I/O",
	"db file parallel read":                         "User I/O",
	"db file single write":                          "User I/O",
	"direct path read":                              "User I/O",
	"direct path read temp":                         "User I/O",
	"direct path write":                             "User I/O",
	"direct path write temp":                        "User I/O",
	"read by other session":                         "User I/O",
	"local write wait":                              "User I/O",
	"buffer read retry":                             "User I/O",
	"control file sequential read":                  "System I/O",
	"control file parallel write":                   "System I/O",
	"control file single write":                     "System I/O",
	"log file parallel write":                       "System I/O",
	"log file sequential read":                      "System I/O",
	"log file single write":                         "System I/O",
	"db file parallel write":                        "System I/O",
	"log file sync":                                 "Commit",
	"buffer busy waits":                             "Concurrency",
	"row cache lock":                                "Concurrency",
	"enq: TX - index contention":                    "Concurrency",
	"enq: TX - row lock contention":                 "Application",
	"enq: TM - contention":                          "Application",
	"enq: RO - fast object reuse":                   "Application",
	"SQL*Net break/reset to client":                 "Application",
	"log buffer space":                              "Configuration",
	"free buffer waits":                             "Configuration",
	"write complete waits":                          "Configuration",
	"SQL*Net message to client":                     "Network",
	"SQL*Net more data to client":                   "Network",
	"SQL*Net more data from client":                 "Network",
	"SQL*Net message to dblink":                     "Network",
	"SQL*Net message from dblink":                   "Network",
	"SQL*Net more data from dblink":                 "Network",
	"SQL*Net more data to dblink":                   "Network",
	"SQL*Net message from client":                   idleClass,
	"PL/SQL lock timer":                             idleClass,
	"pipe get":                                      idleClass,
	"jobq slave wait":                               idleClass,
	"single-task message":                           idleClass,
	"rdbms ipc message":                             idleClass,
	"Streams AQ: waiting for messages in the queue": idleClass,
}

// prefixRules classify families of events by the start of their name.
var prefixRules = []struct{ prefix, class string }{
	{"cell single block", "User I/O"},
	{"cell multiblock", "User I/O"},
	{"cell smart", "User I/O"},
	{"cell list of blocks", "User I/O"},
	{"gc ", "Cluster"},
	{"ges ", "Cluster"},
	{"latch free", "Other"},
	{"latch: ", "Concurrency"},
	{"library cache", "Concurrency"},
	{"cursor: ", "Concurrency"},
	{"log file switch", "Configuration"},
}

// idleClass is the class of waits for work to arrive (the client's think
// time): they are no demand on the database and are left out.
const idleClass = "Idle"

// WaitClass returns the Oracle wait class of a 10046 event name: the
// table's, else a family's, else Other.
func WaitClass(event string) string {
	if c, ok := waitClasses[event]; ok {
		return c
	}
	for _, r := range prefixRules {
		if strings.HasPrefix(event, r.prefix) {
			return r.class
		}
	}
	return "Other"
}

// waitFeature names the demand feature of a wait class.
func waitFeature(class string) string {
	switch class {
	case "User I/O":
		return FeatureUserIO
	case "System I/O":
		return FeatureSystemIO
	case "Commit":
		return FeatureCommit
	case "Concurrency":
		return FeatureConcurrency
	case "Application":
		return FeatureApplication
	case "Configuration":
		return FeatureConfiguration
	case "Network":
		return FeatureNetwork
	case "Cluster":
		return FeatureCluster
	}
	return FeatureOtherWait
}
