// The nlohmann/json harness program (header-only; Debian's
// nlohmann-json3-dev): reads JSON documents from a file (separated by
// lines holding only `---`), parses each with json::parse, walks, queries
// and serialises it, diffs it against the previous document and patches
// that one back into this one. Invalid documents and failed queries throw:
// parse_error, type_error and out_of_range are caught and reported, and
// the next document goes on, so that much of the run comes after landing
// pads reached through __cxa_throw.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using json = nlohmann::json;

static int errors = 0;

// Prints what a caught exception says.
static void report_error(const char *kind, const std::exception &e) {
    errors++;
    std::cout << "  " << kind << ": " << e.what() << "\n";
}

// The sum of the numbers of `j` taken as T (throws type_error on a
// non-number element).
template <typename T> T sum_as(const json &j) {
    T total = 0;
    for (const auto &item : j) {
        total += item.get<T>();
    }
    return total;
}

// Walks `j` depth first, counting the values of each kind.
static void walk(const json &j, int depth, std::vector<int> &kinds) {
    kinds[static_cast<int>(j.type())]++;
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (depth < 2) {
                std::cout << "  key " << it.key() << "\n";
            }
            walk(it.value(), depth + 1, kinds);
        }
    } else if (j.is_array()) {
        for (const auto &item : j) {
            walk(item, depth + 1, kinds);
        }
    }
}

// Queries that may throw: each is caught here, so the document goes on.
static void query(const json &j) {
    try {
        int id = j.at("id").get<int>();
        std::cout << "  id " << id << "\n";
    } catch (json::out_of_range &e) {
        report_error("out_of_range", e);
    } catch (json::type_error &e) {
        report_error("type_error", e);
    }
    try {
        if (j.contains("values")) {
            std::cout << "  sum " << sum_as<int>(j.at("values")) << "\n";
            std::cout << "  mean " << sum_as<double>(j.at("values")) / j.at("values").size() << "\n";
        }
    } catch (json::type_error &e) {
        report_error("type_error", e);
    }
    try {
        std::cout << "  third " << j.at("values").at(2).dump() << "\n";
    } catch (json::exception &e) {
        report_error("exception", e);
    }
}

// Flattens, diffs against `previous` and patches `previous` into `j`.
static void transform(const json &j, const json &previous) {
    json flat = j.flatten();
    std::cout << "  flat " << flat.size() << " " << flat.dump() << "\n";
    json patch = json::diff(previous, j);
    std::cout << "  patch " << patch.dump() << "\n";
    json back = previous.patch(patch);
    std::cout << "  patched equal " << (back == j) << "\n";
    if (flat.is_object()) {
        std::cout << "  unflattened equal " << (flat.unflatten() == j) << "\n";
    }
}

// The document's name and first value: throws (type_error, out_of_range)
// through to main's handlers.
static std::string name_and_first(const json &j) {
    std::string name = j.value("name", std::string("?"));
    return name + " " + j.at(json::json_pointer("/values/0")).dump();
}

static void summary(int n, const std::vector<int> &kinds) {
    std::cout << "document " << n << ":";
    for (int k : kinds) {
        std::cout << " " << k;
    }
    std::cout << "\n";
}

int main(int argc, char **argv) {
    if (argc < 2) {
        std::cout << "usage: json FILE\n";
        return 2;
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::cout << "cannot open " << argv[1] << "\n";
        return 1;
    }
    std::vector<std::string> docs(1);
    std::string line;
    while (std::getline(in, line)) {
        if (line == "---") {
            docs.emplace_back();
        } else {
            docs.back() += line + "\n";
        }
    }
    json previous = json::object();
    int n = 0;
    for (const std::string &text : docs) {
        n++;
        std::vector<int> kinds(10, 0);
        try {
            json j = json::parse(text);
            walk(j, 0, kinds);
            query(j);
            transform(j, previous);
            std::cout << "  name " << name_and_first(j) << "\n";
            std::cout << "  dump " << j.dump(2).size() << " bytes\n";
            previous = j;
        } catch (json::parse_error &e) {
            report_error("parse_error", e);
        } catch (json::type_error &e) {
            report_error("type_error", e);
        } catch (json::out_of_range &e) {
            report_error("out_of_range", e);
        }
        summary(n, kinds);
    }
    std::cout << errors << " errors\n";
    return 0;
}
