package elle

// Check checks a list-append history and returns every anomaly it finds.
// Transactions are named by their index in h. Check does not modify h.
func Check(h []Txn) Result {
	var res Result
	ix := indexAppends(h)
	obs, observed := observe(h, ix, &res)
	orders := versionOrders(obs, &res)
	findCycles(buildGraph(h, ix, obs, orders, observed), &res)
	return res
}
