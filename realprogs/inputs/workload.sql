-- The SQLite harness workload: schema, inserts, an index, joins,
-- aggregates, a recursive CTE, a failed constraint, a syntax error, a
-- rolled back transaction, a trigger and a view.
CREATE TABLE dept(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE emp(id INTEGER PRIMARY KEY, name TEXT, dept INTEGER REFERENCES dept(id), salary REAL CHECK (salary > 0));
INSERT INTO dept(name) VALUES ('eng'), ('ops'), ('sales');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60)
INSERT INTO emp(name, dept, salary) SELECT 'emp' || i, 1 + i % 3, 1000 + (i * 37) % 500 FROM n;
CREATE INDEX emp_dept ON emp(dept, salary);
SELECT d.name, count(*), round(avg(e.salary), 1), max(e.salary) FROM emp e JOIN dept d ON d.id = e.dept GROUP BY d.name ORDER BY d.name;
SELECT name FROM emp WHERE dept = 2 AND salary > 1300 ORDER BY salary DESC LIMIT 3;
INSERT INTO dept(name) VALUES ('eng');
INSERT INTO emp(name, dept, salary) VALUES ('broke', 1, -5);
SELEC * FROM emp;
BEGIN;
UPDATE emp SET salary = salary * 2 WHERE dept = 3;
SELECT sum(salary) FROM emp;
ROLLBACK;
SELECT sum(salary) FROM emp;
CREATE TABLE audit(what TEXT);
CREATE TRIGGER emp_del AFTER DELETE ON emp BEGIN INSERT INTO audit VALUES ('deleted ' || old.name); END;
DELETE FROM emp WHERE id % 10 = 0;
SELECT count(*), group_concat(what, ',') FROM audit;
CREATE VIEW rich AS SELECT name, salary FROM emp WHERE salary > 1450;
SELECT * FROM rich ORDER BY name;
SELECT upper(substr(name, 1, 3)), length(name), typeof(salary) FROM emp WHERE id IN (1, 2, 3);
SELECT json_object('n', count(*)) FROM emp;
