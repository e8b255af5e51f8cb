package main

// localRoute is what the route table needs beyond routes.json, keyed by
// route ID. routes.json records one answer to an old version (the one at
// min_version-1) and names upstream's exception; where our table answers
// in more steps or needs more than the exception name, it is said here.
type localRoute struct {
	// Earlier are too-old steps below older versions than the one
	// routes.json records, oldest first.
	Earlier []step
	// Kind and Class replace what the generator derives from
	// too_old.raised for the step routes.json records.
	Kind  string
	Class string
	// AllowOf names the controller whose methods fill the Allow header of
	// the recorded step (a routing 405).
	AllowOf string
	// TrailingArg is Route.TrailingArg.
	TrailingArg string
	// Alias is Route.Alias where routes.json has no path_alias.
	Alias string
}

// step is one api.TooOld; Kind and Order are the names of the api
// constants.
type step struct {
	Below   int
	Status  int
	Kind    string
	Class   string
	Message string
	AllowOf string
	Order   string
}

// localRoutes is the hand-kept input of the route table. Everything else
// comes from routes.json.
func localRoutes() map[string]localRoute {
	return map[string]localRoute{
		// Below 1.37 NodesController._lookup does not route to traits and
		// pecan answers the PUT with NodesController's own methods.
		"PUT /v1/nodes/{node_ident}/traits":         {AllowOf: "NodesController"},
		"PUT /v1/nodes/{node_ident}/traits/{trait}": {AllowOf: "NodesController"},

		// routes.json says exception.HTTPNotFound, which ironic.common
		// .exception does not define (errors.json lists HTTPNotFound only
		// among webob's exceptions); the answer is Ironic's NotFound.
		"GET /v1/nodes/{node_ident}/children": {Class: "NotFound"},

		// Below 1.89 NodesController._lookup aborts while routing; from
		// 1.89 to 1.92 NodeVmediaController.get aborts inside the handler,
		// the step routes.json records at 1.92.
		"GET /v1/nodes/{node_ident}/vmedia": {
			Earlier: []step{{Below: 89, Status: 404, Kind: "Routing", Order: "BeforePolicy"}},
			Kind:    "Handler",
		},

		// Below 1.92 RunbooksController._route answers before _lookup gets
		// to the traits: GET 404, other methods 405.
		"GET /v1/runbooks/{runbook_id}/traits":            runbookTraits(404),
		"PUT /v1/runbooks/{runbook_id}/traits":            runbookTraits(405),
		"PUT /v1/runbooks/{runbook_id}/traits/{trait}":    runbookTraits(405),
		"DELETE /v1/runbooks/{runbook_id}/traits":         runbookTraits(405),
		"DELETE /v1/runbooks/{runbook_id}/traits/{trait}": runbookTraits(405),

		// pecan passes the surplus path element of
		// PUT .../indicators/{ind_ident}@{component}/{state} to
		// IndicatorController.put as its state argument.
		"PUT /v1/nodes/{node_ident}/management/indicators/{ind_ident}@{component}": {TrailingArg: "state"},

		// NodesController.validate is a custom action of the collection:
		// pecan also calls it for /v1/nodes/validate, the node then coming
		// from the query (?node=, ?node_uuid=). routes.json keeps only the
		// path form.
		"GET /v1/nodes/{node_ident}/validate": {Alias: "/v1/nodes/validate"},
	}
}

func runbookTraits(status int) localRoute {
	return localRoute{Earlier: []step{{
		Below:   92,
		Status:  status,
		Kind:    "Routing",
		Message: "The API version does not allow runbooks",
		Order:   "BeforePolicy",
	}}}
}
