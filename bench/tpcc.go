package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
)

// TPCC is the TPC-C workload: the five transactions on the nine tables,
// Warehouses warehouses, each client bound to a home warehouse (client i
// to warehouse i % Warehouses + 1) as TPC-C's terminals are. There are no
// keying or think times: clients run flat out, as the seeds' evaluations
// do. Money is kept in integer cents and rates in basis points, so every
// target stores the same values. History has a primary key (h_id), which
// TPC-C leaves out and certa's replication needs.
type TPCC struct {
	Warehouses int     // default 1
	Mix        string  // "standard" (default) or a read/write split: "100/0", "80/20", "50/50"
	Scale      float64 // cardinalities relative to TPC-C's (items, customers, orders); default 1
}

// TPCCMixes are the mixes TPCC knows: TPC-C's own, and the read/write
// splits the seeds use (Order-Status and Stock-Level are the reads, in
// equal parts; New-Order, Payment and Delivery the writes, 45:43:4).
var TPCCMixes = []string{"standard", "100/0", "80/20", "50/50"}

func (w TPCC) Name() string {
	if w.Mix == "" || w.Mix == "standard" {
		return "tpcc"
	}
	return "tpcc-" + strings.ReplaceAll(w.Mix, "/", "-") // a file name in --plot
}

// Validate reports the first invalid setting.
func (w TPCC) Validate() error {
	if w.Warehouses < 0 || w.Warehouses > 1000 {
		return fmt.Errorf("bench: tpcc warehouses %d: want 1 to 1000", w.Warehouses)
	}
	if w.Scale < 0 || w.Scale > 1 {
		return fmt.Errorf("bench: tpcc scale %g: want more than 0, at most 1", w.Scale)
	}
	if w.Mix != "" && !strings.Contains(strings.Join(TPCCMixes, " "), w.Mix) {
		return fmt.Errorf("bench: tpcc mix %q: want one of %s", w.Mix, strings.Join(TPCCMixes, ", "))
	}
	return nil
}

// tpccSize is a TPCC's cardinalities.
type tpccSize struct {
	warehouses int
	items      int // items, and stock rows per warehouse
	customers  int // customers, and initial orders, per district
	newOrders  int // initial undelivered orders per district (the newest)
}

const tpccDistricts = 10 // districts per warehouse

func (w TPCC) size() tpccSize {
	scale := w.Scale
	if scale == 0 {
		scale = 1
	}
	s := tpccSize{warehouses: max(1, w.Warehouses), items: int(100000 * scale), customers: int(3000 * scale)}
	s.items, s.customers = max(s.items, 100), max(s.customers, 30)
	s.newOrders = s.customers * 900 / 3000
	return s
}

// tpccSchema creates the nine tables and the indexes the transactions use.
var tpccSchema = []string{
	`CREATE TABLE warehouse (w_id integer PRIMARY KEY, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20),
		w_city varchar(20), w_state char(2), w_zip char(9), w_tax integer NOT NULL, w_ytd bigint NOT NULL)`,
	`CREATE TABLE district (d_w_id integer NOT NULL, d_id integer NOT NULL, d_name varchar(10), d_street_1 varchar(20),
		d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9), d_tax integer NOT NULL,
		d_ytd bigint NOT NULL, d_next_o_id integer NOT NULL, PRIMARY KEY (d_w_id, d_id))`,
	`CREATE TABLE customer (c_w_id integer NOT NULL, c_d_id integer NOT NULL, c_id integer NOT NULL,
		c_first varchar(16), c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20),
		c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16), c_since bigint, c_credit char(2),
		c_credit_lim bigint, c_discount integer NOT NULL, c_balance bigint NOT NULL, c_ytd_payment bigint NOT NULL,
		c_payment_cnt integer NOT NULL, c_delivery_cnt integer NOT NULL, c_data varchar(500),
		PRIMARY KEY (c_w_id, c_d_id, c_id))`,
	`CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)`,
	`CREATE TABLE history (h_id bigint PRIMARY KEY, h_c_id integer, h_c_d_id integer, h_c_w_id integer, h_d_id integer,
		h_w_id integer, h_date bigint, h_amount bigint, h_data varchar(24))`,
	`CREATE TABLE orders (o_w_id integer NOT NULL, o_d_id integer NOT NULL, o_id integer NOT NULL, o_c_id integer NOT NULL,
		o_entry_d bigint, o_carrier_id integer, o_ol_cnt integer, o_all_local integer, PRIMARY KEY (o_w_id, o_d_id, o_id))`,
	`CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)`,
	`CREATE TABLE new_order (no_w_id integer NOT NULL, no_d_id integer NOT NULL, no_o_id integer NOT NULL,
		PRIMARY KEY (no_w_id, no_d_id, no_o_id))`,
	`CREATE TABLE order_line (ol_w_id integer NOT NULL, ol_d_id integer NOT NULL, ol_o_id integer NOT NULL,
		ol_number integer NOT NULL, ol_i_id integer NOT NULL, ol_supply_w_id integer, ol_delivery_d bigint,
		ol_quantity integer, ol_amount bigint, ol_dist_info char(24), PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))`,
	`CREATE TABLE item (i_id integer PRIMARY KEY, i_im_id integer, i_name varchar(24), i_price bigint NOT NULL, i_data varchar(50))`,
	`CREATE TABLE stock (s_w_id integer NOT NULL, s_i_id integer NOT NULL, s_quantity integer NOT NULL,
		s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24),
		s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24),
		s_ytd integer NOT NULL, s_order_cnt integer NOT NULL, s_remote_cnt integer NOT NULL, s_data varchar(50),
		PRIMARY KEY (s_w_id, s_i_id))`,
}

var tpccTables = []string{"warehouse", "district", "customer", "history", "orders", "new_order", "order_line", "item", "stock"}

// Setup creates the tables and loads them as TPC-C's population rules say,
// warehouses in parallel on connections to different nodes.
func (w TPCC) Setup(ctx context.Context, t Target) error {
	if err := w.Validate(); err != nil {
		return err
	}
	c, err := t.Open(ctx, 0, ConsistencyLocal)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, table := range tpccTables {
		if _, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+table); err != nil {
			return fmt.Errorf("drop %s: %w", table, err)
		}
	}
	for _, sql := range tpccSchema {
		if _, err := c.Exec(ctx, sql); err != nil {
			return fmt.Errorf("tpcc schema: %w", err)
		}
	}
	s := w.size()
	l := &loader{ctx: ctx, c: c, rng: rand.New(rand.NewPCG(0, 1))}
	l.items(s)
	if l.err != nil {
		return l.err
	}
	// Warehouses load in parallel, on connections to different nodes.
	var wg sync.WaitGroup
	errs := make([]error, s.warehouses+1)
	slots := make(chan struct{}, max(2, t.Nodes()))
	for wid := 1; wid <= s.warehouses; wid++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			c, err := t.Open(ctx, wid, ConsistencyLocal)
			if err != nil {
				errs[wid] = err
				return
			}
			defer c.Close()
			l := &loader{ctx: ctx, c: c, rng: rand.New(rand.NewPCG(uint64(wid), 1))}
			l.warehouse(s, wid)
			errs[wid] = l.err
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
