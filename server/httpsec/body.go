package httpsec

import "net/http"

// DecodeBody reads a request's JSON body for routes registered outside
// this package, with the auth API's rules: application/json only, one
// object within the route's cap, unknown fields refused (an error the
// router's APIFunc answers with 400, naming the field).
func DecodeBody(r *http.Request, v any) error { return decodeBody(r, v) }
