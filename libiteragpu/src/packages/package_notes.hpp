#pragma once
// The sentences every catalog listing and quote carries, written once (SPEC §4).

namespace iteragpu::package_notes {

inline constexpr const char* kPricesAsLabelled =
    "Prices are what each row's source column says they are: the catalog shipped with "
    "iteragpu holds illustrative, invented prices, not an offer; pass your own catalog for "
    "real prices.";
inline constexpr const char* kNotAnOffer =
    "A catalog proves neither availability nor a reservation: check the provider's page "
    "before buying.";
inline constexpr const char* kRepeatsAreNotResults =
    "Repeats of the same benchmark are not new accepted results: count only distinct, "
    "actually accepted valid units.";

}  // namespace iteragpu::package_notes
