package server

import (
	"context"
	"net/http"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/source"
)

// The body every installer route shares: read the request, run the
// operation, answer its result. A route keeps only what is its own (its
// request's fields and checks, the shape of its answer).

// sourceRequest is the body of the routes that read one source:
// {source, offline?}.
type sourceRequest struct {
	Source  string `json:"source"`
	Offline bool   `json:"offline"`
}

// installBody is the body of POST /plugins/install: the request (or
// nothing of it, to replay the stored one) and the planId that approves
// it, parsed as it is decoded (a malformed one is refused there, naming the
// form). The planId is not part of the request: the approval carries it.
type installBody struct {
	wireRequest
	PlanID installer.PlanID `json:"planId,omitzero"`
}

// planBody is the body of POST /plugins/plan: the request. A planId is
// read only to be refused, whatever its form, saying what to do instead: a
// plan is what makes one.
type planBody struct {
	wireRequest
	PlanID string `json:"planId,omitempty"`
}

// wireRequest is an installer.Request as a route receives it: its source
// is parsed (request) once the route's own checks have passed, so a refused
// source is answered after them, as the installer answers one — the whole
// refused response, naming it — exactly as when the installer parsed it.
type wireRequest struct {
	installer.Request
	Source string `json:"source"`
}

// request is the request with its source parsed: the daemon's one parse
// of it (source.FromText, as the CLI's). A refused source is
// answered by the response that names it.
func (b wireRequest) request() (installer.Request, *installer.Response, error) {
	req := b.Request
	src, err := source.FromText(b.Source)
	if err != nil {
		return req, installer.ErrorResponse(b.Source, err), err
	}
	req.Source = src
	return req, nil, nil
}

// decodeReporting begins the progress stream the request names in
// ProgressHeader, if any (install: the stream reports an install, not a
// plan), and decodes the body into v. ok is false when either was
// answered already; a stream begun is then ended as failed.
func (s *Server) decodeReporting(w http.ResponseWriter, r *http.Request, install bool, v any) (p *progressStream, ok bool) {
	if id := r.Header.Get(ProgressHeader); id != "" {
		if p, ok = s.progressStream(w, r, id); !ok {
			return nil, false
		}
		p.begin(install)
	}
	if !s.decode(w, r, v) {
		finishProgress(p, nil)
		return nil, false
	}
	return p, true
}

// run runs op on a context detached from the request (see detached: a
// client that leaves does not cut an install or a registry write in two),
// reporting to p when it is not nil, then ends p with the status of the
// response op returned and replies with it.
func (s *Server) run(w http.ResponseWriter, r *http.Request, p *progressStream, op func(context.Context) (any, error)) {
	ctx, cancel := s.detached()
	defer cancel()
	if p != nil {
		ctx = resolver.WithProgress(ctx, reporter(p.update))
	}
	v, err := op(ctx)
	if p != nil {
		resp, _ := v.(*installer.Response)
		finishProgress(p, resp)
	}
	s.reply(w, r, v, err)
}

// pathName is the route's {name}, a plugin or marketplace name; one that
// is not a valid name is answered (ok false).
func (s *Server) pathName(w http.ResponseWriter, r *http.Request) (name string, ok bool) {
	name = r.PathValue("name")
	if err := plugind.ValidateName(name); err != nil {
		s.fail(w, r, err)
		return "", false
	}
	return name, true
}
