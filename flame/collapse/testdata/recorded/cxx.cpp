// A CPU-bound C++ program whose stacks hold the names the Perl collapser
// cuts: templates, lambdas, std::function, an anonymous namespace and an
// operator. Profiled by TestInfernoRecorded.
#include <chrono>
#include <functional>
#include <map>
#include <string>

namespace {
template <typename T>
struct Accumulator {
	T sum{};
	__attribute__((noinline)) void operator()(T v) {
		for (int i = 0; i < 50; i++) sum = sum * 3 + v + i;
	}
};
}  // namespace

template <typename T, int N>
__attribute__((noinline)) T apply(const std::function<T(T, T)>& f, T x) {
	T r = x;
	for (int i = 0; i < N; i++) r = f(r, static_cast<T>(i));
	return r;
}

int main() {
	std::map<std::string, long> seen;
	auto mix = [&seen](long a, long b) -> long {
		volatile long s = a;
		for (int i = 0; i < 100; i++) s = s * 31 + b + i;
		return s;
	};
	std::function<long(long, long)> fn = mix;
	Accumulator<double> acc;
	long total = 0;
	auto start = std::chrono::steady_clock::now();
	while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(700)) {
		total += apply<long, 2000>(fn, total);
		acc(static_cast<double>(total % 7));
		seen[std::to_string(total % 13)]++;
	}
	return total == 42 && acc.sum == 0;
}
