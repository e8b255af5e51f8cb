// Package shard serves GET /v1/shards (1.82+) as upstream's
// ironic/api/controllers/v1/shard.py: every shard with its node count.
package shard

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/store"
)

// Deps is what the shard handler needs.
type Deps struct {
	Store store.Store
}

// Register adds the shard handler to m.
func Register(m map[string]api.HandlerFunc, d Deps) {
	m["GET /v1/shards"] = func(w http.ResponseWriter, r *http.Request, _ *api.RequestContext) error {
		return list(w, r, d.Store)
	}
	// Upstream's get_one refuses every shard name.
	m["GET /v1/shards/{shard}"] = func(http.ResponseWriter, *http.Request, *api.RequestContext) error {
		return errs.HTTPStatus(http.StatusNotFound, "The resource could not be found.")
	}
}

// list is get_shard_list: nodes counted by shard, most populated first.
// Upstream formats each name with str(), so nodes without a shard are
// counted under the name "None"; clients see that entry.
func list(w http.ResponseWriter, r *http.Request, s store.Store) error {
	// Upstream's handler takes no argument and fails with a server error
	// on any; a client error says the same without the 500.
	if _, err := apiutil.ParseQuery(r); err != nil {
		return err
	}
	nodes, err := s.ListNodeColumns(r.Context(), store.NodeFilter{IncludeChildren: true}, store.ListOptions{}, []string{"shard"})
	if err != nil {
		return fmt.Errorf("list shards: %w", err)
	}
	counts := map[string]int{}
	var names []*string
	for _, n := range nodes {
		key := "None"
		if n.Shard != nil {
			key = *n.Shard
		}
		if _, seen := counts[key]; !seen {
			names = append(names, n.Shard)
		}
		counts[key]++
	}
	// GROUP BY order (NULL first, then by name), then a stable sort by
	// count, descending, as upstream sorts the rows.
	slices.SortFunc(names, func(a, b *string) int {
		switch {
		case a == nil:
			return -1
		case b == nil:
			return 1
		}
		return cmp.Compare(*a, *b)
	})
	shards := make([]*apiutil.Dict, 0, len(names))
	for _, n := range names {
		name := "None"
		if n != nil {
			name = *n
		}
		d := apiutil.NewDict()
		d.Set("name", name)
		d.Set("count", counts[name])
		shards = append(shards, d)
	}
	slices.SortStableFunc(shards, func(a, b *apiutil.Dict) int {
		ca, _ := a.Get("count")
		cb, _ := b.Get("count")
		return cb.(int) - ca.(int)
	})
	out := apiutil.NewDict()
	out.Set("shards", shards)
	return api.WriteJSON(w, http.StatusOK, out)
}
