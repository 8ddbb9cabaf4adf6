// tests/progs/cxx_names.cc - C++ functions with mangled names (a namespace, a class template,
// an overload) that spend CPU time for a given number of seconds, for the demangling checks:
// ns::Box<double>::sum() const takes about twice the time of ns::twice(int).
#include <chrono>
#include <cstdlib>

namespace ns {
template <typename T> struct Box {
	T v[64];
	T __attribute__((noinline)) sum() const
	{
		T s = 0;
		for (int r = 0; r < 2000; r++)
			for (int i = 0; i < 64; i++)
				s += v[i] * (T)r;
		return s;
	}
};

int __attribute__((noinline)) twice(int x)
{
	volatile int s = 0;
	for (int i = 0; i < 64000; i++)
		s = s + x * i;
	return s;
}
} // namespace ns

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	ns::Box<double> b{};
	for (int i = 0; i < 64; i++)
		b.v[i] = i;
	volatile double sink = 0;
	auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(secs);
	while (std::chrono::steady_clock::now() < end) {
		sink = sink + b.sum() + b.sum();
		sink = sink + ns::twice(3);
	}
	return sink < 0;
}
