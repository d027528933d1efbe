package api

import (
	"fmt"
	"net/http"

	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/config"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/server/jobctl"
)

// registerJobChanges adds the routes that change the collection jobs.
// Creating, changing and deleting a job is the admin's (jobs are
// settings: a job reads files and reaches databases with the server's
// rights); pausing and resuming one is running it, the operator's.
func registerJobChanges(rt *httpsec.Router, m *jobctl.Manager) {
	c := jobChanges{m: m}
	rt.Handle("POST", "/api/v1/jobs", auth.Admin, rt.API(httpsec.WithBody(c.create)))
	rt.Handle("PUT", "/api/v1/jobs/{name}", auth.Admin, rt.API(httpsec.WithBody(c.update)))
	rt.Handle("DELETE", "/api/v1/jobs/{name}", auth.Admin, rt.API(c.named(http.StatusNoContent, c.delete)))
	rt.Handle("POST", "/api/v1/jobs/{name}/pause", auth.Operator, rt.API(c.named(http.StatusOK, c.pause)))
	rt.Handle("POST", "/api/v1/jobs/{name}/resume", auth.Operator, rt.API(c.named(http.StatusOK, c.resume)))
}

type jobChanges struct{ m *jobctl.Manager }

// jobDefinition is a job as the API takes it: the keys of a job of the
// configuration file. A password is never part of it: password_env names
// a variable of the server's environment, password_file a file.
type jobDefinition struct {
	Name         string `json:"name,omitempty"` // in the path for PUT
	Source       string `json:"source"`
	Interval     string `json:"interval,omitempty"`
	Schedule     string `json:"schedule,omitempty"`
	Retention    string `json:"retention,omitempty"`
	PasswordEnv  string `json:"password_env,omitempty"`
	PasswordFile string `json:"password_file,omitempty"`
}

func (d jobDefinition) job() config.Job {
	return config.Job{Name: d.Name, Source: d.Source, Interval: d.Interval, Schedule: d.Schedule,
		Retention: d.Retention, PasswordEnv: d.PasswordEnv, PasswordFile: d.PasswordFile}
}

// createJobRequest is a new job, started at once unless paused.
type createJobRequest struct {
	jobDefinition
	Paused bool `json:"paused,omitempty"`
}

func (c jobChanges) create(w http.ResponseWriter, r *http.Request, req createJobRequest) (int, any, error) {
	if err := c.available(); err != nil {
		return 0, nil, err
	}
	st, err := c.m.Create(r.Context(), actor(r), req.job(), req.Paused)
	return http.StatusCreated, st, err
}

func (c jobChanges) update(w http.ResponseWriter, r *http.Request, req jobDefinition) (int, any, error) {
	name, err := c.jobName(r)
	if err != nil {
		return 0, nil, err
	}
	if req.Name != "" && req.Name != name {
		return 0, nil, fmt.Errorf("%w: the body names job %q, the path %q: a job cannot be renamed (create the new one, delete the old)", auth.ErrInvalid, req.Name, name)
	}
	req.Name = name
	st, err := c.m.Update(r.Context(), actor(r), req.job())
	return http.StatusOK, st, err
}

// named adapts a change of the job named in the path, answering status.
func (c jobChanges) named(status int, change func(r *http.Request, name string) (any, error)) httpsec.APIFunc {
	return func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		name, err := c.jobName(r)
		if err != nil {
			return 0, nil, err
		}
		v, err := change(r, name)
		return status, v, err
	}
}

func (c jobChanges) delete(r *http.Request, name string) (any, error) {
	return nil, c.m.Delete(r.Context(), actor(r), name)
}

func (c jobChanges) pause(r *http.Request, name string) (any, error) {
	return c.m.Pause(r.Context(), actor(r), name)
}

func (c jobChanges) resume(r *http.Request, name string) (any, error) {
	return c.m.Resume(r.Context(), actor(r), name)
}

// available refuses changes on a router built without a job manager.
func (c jobChanges) available() error {
	if c.m == nil {
		return fmt.Errorf("jobs cannot be changed on this server: %w", auth.ErrNotFound)
	}
	return nil
}

// jobName reads the {name} of a job route. Any job's name is accepted
// (the command line's jobs are named after their SOURCE, such as
// nettest:127.0.0.1:1): it is only looked up, never used as a path.
func (c jobChanges) jobName(r *http.Request) (string, error) {
	if err := c.available(); err != nil {
		return "", err
	}
	name := r.PathValue("name")
	if err := config.CheckJobName(name); err != nil {
		return "", fmt.Errorf("%w: %v", auth.ErrInvalid, err)
	}
	return name, nil
}

// actor is who asks, from where, for the audit log.
func actor(r *http.Request) auth.Actor {
	p, _ := httpsec.PrincipalFrom(r.Context())
	return p.Actor(httpsec.RemoteHost(r))
}
