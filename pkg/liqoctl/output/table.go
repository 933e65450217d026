package output

import (
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
)

// Table prints rows under columns as kubectl prints its tables (cli-runtime's
// table printer): upper-case headers, columns three spaces apart, nothing
// when there are no rows.
func Table(w io.Writer, columns []string, rows [][]string) error {
	t := &metav1.Table{}
	for _, c := range columns {
		t.ColumnDefinitions = append(t.ColumnDefinitions, metav1.TableColumnDefinition{Name: c, Type: "string"})
	}
	for _, r := range rows {
		cells := make([]any, len(r))
		for i, v := range r {
			cells[i] = v
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: cells})
	}
	return printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(t, w)
}
