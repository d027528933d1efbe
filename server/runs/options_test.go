package runs

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestKindSpecsDescribeEveryParameter keeps the forms' descriptions equal
// to the parameters the server decodes: every JSON field of each kind's
// params, in order, with defaults the check really fills in.
func TestKindSpecsDescribeEveryParameter(t *testing.T) {
	pol := policy{iotestDirs: []string{t.TempDir()}, loopbackOnly: true, processExists: func(int) bool { return true }}
	specs := kindSpecs(pol)
	var kinds []string
	for _, k := range specs {
		kinds = append(kinds, k.Kind)
		v, err := newParams(k.Kind)
		if err != nil {
			t.Fatal(err)
		}
		var fields, described []string
		typ := reflect.TypeOf(v).Elem()
		for i := range typ.NumField() {
			fields = append(fields, strings.Split(typ.Field(i).Tag.Get("json"), ",")[0])
		}
		for _, p := range k.Params {
			described = append(described, p.Name)
			if p.Label == "" || p.Flag == "" || p.Type == "" {
				t.Errorf("%s.%s: label, flag and type are required: %+v", k.Kind, p.Name, p)
			}
		}
		if !slices.Equal(fields, described) {
			t.Errorf("%s: params %v, described %v", k.Kind, fields, described)
		}
	}
	if !slices.Equal(kinds, Kinds()) {
		t.Errorf("kinds described %v; the server runs %v", kinds, Kinds())
	}
	// The defaults shown are those a run gets.
	iot := IOTestParams{Dir: pol.iotestDirs[0]}
	if err := iot.check(pol); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"duration": iot.Duration.String(), "warmup": iot.Warmup.String(), "interval": iot.Interval.String(),
		"size": iot.Size, "bs": iot.BS}
	for _, p := range specs[1].Params {
		if w, ok := want[p.Name]; ok && p.Default != w {
			t.Errorf("iotest %s: default shown %q, applied %q", p.Name, p.Default, w)
		}
	}
}
