package main

import (
	"fmt"
	"log"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

type Author struct {
	ID     int64  `gorm:"primaryKey"`
	Name   string `gorm:"size:100;not null;uniqueIndex:author_name_key"`
	Born   *string
	Rating float64
	Bio    string
}

func (Author) TableName() string { return "author" }

type Book struct {
	ID       int32 `gorm:"primaryKey"`
	AuthorID int64
	Author   Author
	Title    string `gorm:"size:200;index:book_title_idx"`
}

func (Book) TableName() string { return "book" }

func main() {
	db, err := gorm.Open(postgres.Open("host=127.0.0.1 port=55432 user=certa dbname=certa sslmode=disable"), &gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err != nil {
		log.Fatal(err)
	}
	m := db.Migrator()
	fmt.Println(m.CurrentDatabase())
	fmt.Println(m.HasTable("author"), m.HasTable(&Book{}), m.HasTable("nosuch"))
	fmt.Println(m.HasColumn(&Book{}, "title"), m.HasColumn("author", "rating"), m.HasColumn(&Author{}, "nosuch"))
	fmt.Println(m.HasIndex(&Book{}, "book_title_idx"), m.HasIndex(&Book{}, "Title"), m.HasIndex("book", "book_author_title"))
	fmt.Println(m.HasConstraint(&Book{}, "Author"), m.HasConstraint("book", "book_author_id_fkey"), m.HasConstraint("book", "book_price_check"))
	tables, err := m.GetTables()
	fmt.Println(tables, err)
	for _, t := range []string{"author", "book", "tag"} {
		cts, err := m.ColumnTypes(t)
		if err != nil {
			log.Fatal(err)
		}
		for _, c := range cts {
			n, _ := c.Nullable()
			u, _ := c.Unique()
			p, _ := c.PrimaryKey()
			d, _ := c.DefaultValue()
			fmt.Println(t, c.Name(), c.DatabaseTypeName(), n, u, p, d)
		}
		idx, err := m.GetIndexes(t)
		fmt.Println(len(idx), err)
	}
	fmt.Println(m.GetTypeAliases("int"))
}
