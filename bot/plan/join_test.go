package plan

import (
	"reflect"
	"testing"

	"github.com/driftfix/driftfix/bot/drift"
	"github.com/driftfix/driftfix/remediations"
	"github.com/driftfix/driftfix/templates"
)

// TestJoinKeepsEveryField: instances are scanned into their own results and
// joined; a field join forgets is lost for every instance. Each exported
// field of a scanned part must come through (URLs and Shards are the cycle's
// own, Digest.Fleet is computed after the join; the lines left for people
// are gathered once all are joined).
func TestJoinKeepsEveryField(t *testing.T) {
	var part CycleResult
	v := reflect.ValueOf(&part).Elem()
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), v.Type().Field(i).Name
		if !v.Type().Field(i).IsExported() || name == "URLs" || name == "Shards" || name == "Digest" {
			continue
		}
		switch f.Kind() {
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Int:
			f.SetInt(1)
		case reflect.Map:
			m := reflect.MakeMap(f.Type())
			m.SetMapIndex(reflect.Zero(f.Type().Key()), reflect.Zero(f.Type().Elem()))
			f.Set(m)
		default:
			t.Fatalf("field %s (%s): teach this test its kind", name, f.Kind())
		}
	}
	part.Digest.Instance, part.Digest.NewStuck = "main", make([]templates.AppLine, 1)
	part.Digest.ForPeople = make([]templates.PersonLine, 1)
	part.platform = map[string]remediations.PlatformApp{"main/argocd/web": {Snapshot: &drift.Snapshot{}}}
	var res CycleResult
	res.join(&part)
	res.gatherPeople() // as Cycle does once every part is joined
	if len(res.platform) != 1 {
		t.Error("join drops the snapshots kept for platform fixes")
	}
	got := reflect.ValueOf(res)
	for i := 0; i < got.NumField(); i++ {
		name := got.Type().Field(i).Name
		if !got.Type().Field(i).IsExported() || name == "URLs" || name == "Shards" {
			continue
		}
		if got.Field(i).IsZero() {
			t.Errorf("join drops CycleResult.%s", name)
		}
	}
	if len(res.Digest.NewStuck) != 1 || len(res.Digest.ForPeople) != 1 || res.Digest.Instance != "main" {
		t.Errorf("join drops digest lines: %+v", res.Digest)
	}
}
