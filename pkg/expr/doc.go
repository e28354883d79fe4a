// Package expr finds the ${...} expressions in the strings of a resource
// template and records where each one sits.
//
// A string whose whole value is one ${expr} is standalone: the expression's
// result replaces the field and may be of any type. Otherwise each ${expr} is
// embedded in literal text and must yield a string. `$${` writes a literal
// `${` without starting an expression.
package expr
