package argocd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"testing"
)

// TestListFilterQuery: a ListFilter reaches argocd-server as the query
// parameters of its application list (ApplicationQuery's selector,
// repeated projects and appNamespace), as `argocd app list -l -p -N` sends
// them; an empty filter sends none.
func TestListFilterQuery(t *testing.T) {
	for _, tc := range []struct {
		name   string
		filter ListFilter
		want   url.Values
	}{
		{name: "none", want: url.Values{}},
		{name: "all", filter: ListFilter{Selector: "team in (a,b),!legacy", Projects: []string{"web", "data"}, AppNamespace: "apps"},
			want: url.Values{"selector": {"team in (a,b),!legacy"}, "projects": {"web", "data"}, "appNamespace": {"apps"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got url.Values
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = r.URL.Query()
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"items":[]}`))
			}))
			defer srv.Close()
			c, err := New(Config{BaseURL: srv.URL, Token: "t", List: tc.filter})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ListApplications(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got.Get("fields") == "" {
				t.Errorf("the list asked for no fields: %v", got)
			}
			got.Del("fields")
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("query %v, want %v", got, tc.want)
			}
		})
	}
}
