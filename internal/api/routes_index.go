package api

import "slices"

// routeIndex narrows the routes a request can reach before any pattern is
// compared. Every route path starts with a literal collection element
// (nodes, ports, drivers, ...), so a request is compared only with the
// routes of its first element instead of the whole table; the profiles of
// GET /v1/nodes/{uuid} had the router's walks over every route at about a
// tenth of the request's CPU (issue 29).
type routeIndex struct {
	// byFirst holds, for each first element below /v1 that a route's
	// path or alias starts with, the routes a request starting with it
	// can match, in table order (ties between routes go to the first).
	byFirst map[string][]*Route
	// rest are the routes whose path is empty (/ and /v1), which a
	// one-element path reaches as a surplus argument of the root: every
	// bucket holds them, and they are all a first element no route names
	// can reach.
	rest []*Route
	// idents are the distinct positions of lookupIdents in the route
	// paths, in table order, with what routing decides at each.
	idents []identPosition
}

// identPosition is a path parameter NodesController._lookup or
// PortgroupsController._lookup checks while routing: the element after
// prefix (a route path's first elements) when a request matches prefix.
type identPosition struct {
	prefix []string
	// name is the parameter's name in args.uuid_or_name's message.
	name string
	// actions are the collection's own literal children (detail,
	// validate): the element is no identifier there.
	actions map[string]bool
	// children are the literal children of the identified object
	// (states, vifs, ...): one in the identifier's place is a 404.
	children map[string]bool
}

func newRouteIndex(routes []*Route) routeIndex {
	ix := routeIndex{byFirst: map[string][]*Route{}}
	for _, r := range routes {
		if len(r.segs) == 0 {
			ix.rest = append(ix.rest, r)
		}
	}
	for _, r := range routes {
		for _, segs := range [][]string{r.segs, r.aliasSegs} {
			if len(segs) == 0 {
				continue
			}
			first := segs[0]
			if _, ok := ix.byFirst[first]; !ok {
				ix.byFirst[first] = nil
			}
		}
	}
	// Each bucket keeps table order, with the routes of rest where they
	// stand in the table.
	for first := range ix.byFirst {
		for _, r := range routes {
			if startsWith(r.segs, first) || startsWith(r.aliasSegs, first) || slices.Contains(ix.rest, r) {
				ix.byFirst[first] = append(ix.byFirst[first], r)
			}
		}
	}
	ix.idents = identPositions(routes)
	return ix
}

func startsWith(segs []string, first string) bool { return len(segs) > 0 && segs[0] == first }

// candidates are the routes a request path (below /v1, not empty) can
// match, or match a prefix of.
func (ix *routeIndex) candidates(segs []string) []*Route {
	if rs, ok := ix.byFirst[segs[0]]; ok {
		return rs
	}
	return ix.rest
}

// identPositions finds, for each route, the first position lookupIdents
// names in its path: the only one routing checks for it (a later one
// matches only where the first matches too, and the check stops at the
// first). Routes sharing a prefix share its position, checked once.
func identPositions(routes []*Route) []identPosition {
	var out []identPosition
	for _, r := range routes {
		for i, p := range r.segs {
			if i == 0 || !isParam(p) {
				continue
			}
			name, ok := lookupIdents[r.segs[i-1]]
			if !ok {
				continue
			}
			prefix := r.segs[:i]
			if !slices.ContainsFunc(out, func(ip identPosition) bool { return slices.Equal(ip.prefix, prefix) }) {
				out = append(out, identPosition{
					prefix:   prefix,
					name:     name,
					actions:  literalsAfter(routes, prefix),
					children: literalsAfter(routes, r.segs[:i+1]),
				})
			}
			break
		}
	}
	return out
}

// literalsAfter are the literal elements that follow prefix in some
// route's path or alias.
func literalsAfter(routes []*Route, prefix []string) map[string]bool {
	out := map[string]bool{}
	for _, r := range routes {
		for _, segs := range [][]string{r.segs, r.aliasSegs} {
			if len(segs) > len(prefix) && slices.Equal(segs[:len(prefix)], prefix) {
				out[segs[len(prefix)]] = true
			}
		}
	}
	return out
}
