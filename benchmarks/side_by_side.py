"""Two binaries measured in the same rounds, in turn, and their medians side by side: on these
shared, noisy machines only figures taken together compare."""
import statistics


class SideBySide:
    def __init__(self, binaries, base, ratio_name):
        """binaries: {name: path}; base: the path the ratios are taken against."""
        self.binaries = binaries
        self.base = base
        self.ratio_name = ratio_name

    def interleaved(self, rounds, measure):
        """measure(binary) for every binary in turn, `rounds` times: {binary: [figures]}."""
        samples = {b: [] for b in self.binaries.values()}
        for _ in range(rounds):
            for binary in self.binaries.values():
                samples[binary].append(measure(binary))
        return samples

    def table(self, title, unit, samples, fmt="{:.2f}"):
        print(f"{title}\n")
        print(f"| binary | runs | median [{unit}] | {self.ratio_name} |\n|---|---:|---:|---:|")
        base = statistics.median(samples[self.base])
        for name, binary in self.binaries.items():
            s = samples[binary]
            ratio = f"{statistics.median(s) / base:.3f}x" if base else "-"
            print(f"| {name} | {len(s)} | {fmt.format(statistics.median(s))} | {ratio} |")
        print()
