// Nexmark events against the reference model run on the JVM: the expected values were printed by a
// Java program that follows the reference generator (java.util.Random seeded with the event id,
// String.trim, Math.round, Math.pow, String.format) with the default configuration, base time
// 2015-07-15T00:00:00Z and 10000 events/s. Bid URLs are checked by shape in
// nexmark_sequence_test.cpp because they deviate from the reference on purpose (see nexmark.h).
#include <gtest/gtest.h>

#include "flow/runtime/generators/nexmark.h"

namespace flow::rt {
namespace {

NexmarkGenerator DefaultGenerator() {
  auto gen = NexmarkGenerator::Create(NexmarkConfig{});
  EXPECT_TRUE(gen.ok()) << gen.status().ToString();
  return std::move(gen).value();
}

TEST(NexmarkReferenceTest, PersonsMatchTheReferenceModel) {
  NexmarkGenerator gen = DefaultGenerator();
  NexmarkPerson p;
  ASSERT_EQ(gen.KindAt(0), NexmarkKind::kPerson);
  gen.GeneratePerson(0, &p);
  EXPECT_EQ(p.id, 1000);
  EXPECT_EQ(p.name, "Peter Jones");
  EXPECT_EQ(p.emailAddress, "nhd@xcat.com");
  EXPECT_EQ(p.creditCard, "7241 7320 9143 4888");
  EXPECT_EQ(p.city, "Portland");
  EXPECT_EQ(p.state, "WY");
  EXPECT_EQ(p.dateTime, 1436918400000);
  EXPECT_EQ(
      p.extra,
      R"(WN_HS_bnpkkiwhwana_L^`KZjdgsid`K]MLU[aaOH`ztxbulvlxtkn_ZZ^T\mqgdjzvlkymsmfrhkfVYSXK_OY[aVYVKa\X^]RO]OYguwiduWJNQLLaMLHOTaHY_J[YKWaUOSJN_VHWXZ]`SgbnjqeVVQ\[[)");
  ASSERT_EQ(gen.KindAt(50), NexmarkKind::kPerson);
  gen.GeneratePerson(50, &p);
  EXPECT_EQ(p.id, 1001);
  EXPECT_EQ(p.name, "Sarah Smith");
  EXPECT_EQ(p.emailAddress, "f  y@yumv.com");
  EXPECT_EQ(p.creditCard, "0892 2755 1923 0591");
  EXPECT_EQ(p.city, "Los Angeles");
  EXPECT_EQ(p.state, "ID");
  EXPECT_EQ(p.dateTime, 1436918400005);
  EXPECT_EQ(
      p.extra,
      R"(`RT]WInnxtneWPLPHOywusizasixbmVVHKO_Y_MOYPmoftdguqtxkyXPO_ZNYMaKVQ\``OOXTNOWIKUOLIaWQN\H[_cihasyNLOMHLVHKVRIznfdmdeqqvumRMZYKKNRJ[K^IIN`RJM`H[^^vbqrxduih)");
  ASSERT_EQ(gen.KindAt(1234550), NexmarkKind::kPerson);
  gen.GeneratePerson(1234550, &p);
  EXPECT_EQ(p.id, 25691);
  EXPECT_EQ(p.name, "Saul Shultz");
  EXPECT_EQ(p.emailAddress, "ccso v@xebo.com");
  EXPECT_EQ(p.creditCard, "9628 4187 8219 2252");
  EXPECT_EQ(p.city, "Redmond");
  EXPECT_EQ(p.state, "CA");
  EXPECT_EQ(p.dateTime, 1436918523455);
  EXPECT_EQ(
      p.extra,
      R"(ecvuveayihilpgjlzscsapjsqqehnxuvwpmxY_PMQVgyjyeu^[^UKatxjhpemfhrobYaVOSXticuqwnutgnammbgxiklxcfzclnocvJaRJM`ypgdwfXR\T^MXVL]JYJOWQKYaHJN]_ghmvya)");
}

TEST(NexmarkReferenceTest, AuctionsMatchTheReferenceModel) {
  NexmarkGenerator gen = DefaultGenerator();
  NexmarkAuction a;
  ASSERT_EQ(gen.KindAt(1), NexmarkKind::kAuction);
  gen.GenerateAuction(1, &a);
  EXPECT_EQ(a.id, 1000);
  EXPECT_EQ(a.itemName, "wkx mgee");
  EXPECT_EQ(a.description, "eszpqxtdxrvwmmywkmogoahf");
  EXPECT_EQ(a.initialBid, 28873);
  EXPECT_EQ(a.reserve, 29448);
  EXPECT_EQ(a.dateTime, 1436918400000);
  EXPECT_EQ(a.expires, 1436918400011);
  EXPECT_EQ(a.seller, 1000);
  EXPECT_EQ(a.category, 13);
  EXPECT_EQ(
      a.extra,
      R"(zcurskufssowmihzpmZHWQM^fnleramznyyqimoheaRSWV^OjtfjhgXRa`[PVHUOMTbrqqzjyztfwnhstxbu]\V_XPldnjuo^^PJQMnwhlsenoniir^aNZI__IP[QLYPROSNW]HYP\L]W^PTkfnbtwuqucwreikflftlgtebaurwml^RMRIPqevmpqsnxmcblfvpfeajfopsHS^U[Jzxwajo_W`RXa[XWI[`VXZOR^lghgmwHITMP[dbwdgtPQJYHLjnubcsjgszqvyzeoeqjcbaazmrqamxoxgrjh`L`]_Y^OQM]ItjxtuwZJS[RTmrkpofsnuysxuvwbuzrqkrkkqpiz)");
  ASSERT_EQ(gen.KindAt(3), NexmarkKind::kAuction);
  gen.GenerateAuction(3, &a);
  EXPECT_EQ(a.id, 1002);
  EXPECT_EQ(a.itemName, "gxycmhtobprpd");
  EXPECT_EQ(a.description, "ybjpocsabdbtiqzhbupw ihlxbsqjkmp lbupz bcqnghg fojwfqs");
  EXPECT_EQ(a.initialBid, 267);
  EXPECT_EQ(a.reserve, 422398);
  EXPECT_EQ(a.dateTime, 1436918400000);
  EXPECT_EQ(a.expires, 1436918400001);
  EXPECT_EQ(a.seller, 1000);
  EXPECT_EQ(a.category, 10);
  EXPECT_EQ(
      a.extra,
      R"(JKSLMTmulfbwHKXUXSztthwgwcilixpeyzjs^`RK^RutzkvkSILV]Srsjtomlebedl_HQ_\S]I[`H]ywaawvTWIPI\[aKRR\_H\VONnznhbyUIaP^V\NSJ\XznlkqxadbnbdXKZPTVdpaxvmeuptpyrgetseedsfgaKT\JPYdxwjsgpdvnmxampjcr]\`^KYfxuiihlzdqdtglvgflZWSXVXeypjmxJUT_ONerzgyecnattpwjdmszkkwcucgmxpov`\[WUYUTaWNQNIM^SWWVXK_IuskbngavgqooxvfbobmkwsxrtmwtyycvbwjpVHPQIT]LNXSLQL^]KLRPU`LVjkyjlrhlcdctlrnulpSS[aWTQ^QTMVSPVSKOpdhxcwOK[YMLiasswo]K_WURbnvmp)");
  ASSERT_EQ(gen.KindAt(1234552), NexmarkKind::kAuction);
  gen.GenerateAuction(1234552, &a);
  EXPECT_EQ(a.id, 75074);
  EXPECT_EQ(a.itemName, "kowoh");
  EXPECT_EQ(a.description, "ocr  qtacuia");
  EXPECT_EQ(a.initialBid, 305);
  EXPECT_EQ(a.reserve, 17730);
  EXPECT_EQ(a.dateTime, 1436918523455);
  EXPECT_EQ(a.expires, 1436918523687);
  EXPECT_EQ(a.seller, 24902);
  EXPECT_EQ(a.category, 13);
  EXPECT_EQ(
      a.extra,
      R"(ztqcoovyagfdxnrpodwtsybfkmmzoy[J^^]JHMSVNQ_\ZZWK[ZO[IKnlfxtbncnwgkHKKWSLU`SWJTIaOT]_cndypd[IUSQ\nfyfndtsmqcwnfiwrr_HRXH]vqkuroRPUHOObrvwgurszhpp[ZOJUMfivuzw^]XZORoapgcjsmdbxeaVOWKSedkgez]aHIRM[OV`Q__OOU`RvmzzrhcgqqgfvtjfwhPOML^NHLQUaInrdlrs[Na\LPvdflmsqrxtgkUIQ^V^dcsabdYRHH\KXZ`JJNWSHLaPglqovwJNZMIXnfqdyoucuwibxigeolrckjodavjefiXSLMJ_^TQK^abkaoemLTSNYHqvejbmM[\Ra\XLQWNZSI\TL`YSVWYQ^\ONNWNN_M`Ixxkrsjehvoroag)");
}

TEST(NexmarkReferenceTest, BidsMatchTheReferenceModel) {
  NexmarkGenerator gen = DefaultGenerator();
  NexmarkBid b;
  ASSERT_EQ(gen.KindAt(4), NexmarkKind::kBid);
  gen.GenerateBid(4, &b);
  EXPECT_EQ(b.auction, 1000);
  EXPECT_EQ(b.bidder, 1001);
  EXPECT_EQ(b.price, 32530001);
  EXPECT_EQ(b.channel, "Google");
  EXPECT_EQ(b.dateTime, 1436918400000);
  EXPECT_EQ(b.extra, R"(sbolvyqwgticfdrwdyiyofziYMU\Z`UaTQO][NX\RM]WPYTOuwogvszlx)");
  ASSERT_EQ(gen.KindAt(49), NexmarkKind::kBid);
  gen.GenerateBid(49, &b);
  EXPECT_EQ(b.auction, 1000);
  EXPECT_EQ(b.bidder, 1001);
  EXPECT_EQ(b.price, 545);
  EXPECT_EQ(b.channel, "channel-4763");
  EXPECT_EQ(b.dateTime, 1436918400004);
  EXPECT_EQ(b.extra, R"(zxptuoLI`ZXTR^V`SKNKP\[]JK_OJ\hgjhnbL^LKRYjiuaqbaI\JS[lcxqumgpufgq`]VHL)");
  ASSERT_EQ(gen.KindAt(987654321), NexmarkKind::kBid);
  gen.GenerateBid(987654321, &b);
  EXPECT_EQ(b.auction, 59260227);
  EXPECT_EQ(b.bidder, 19754001);
  EXPECT_EQ(b.price, 1513);
  EXPECT_EQ(b.channel, "channel-6889");
  EXPECT_EQ(b.dateTime, 1437017165432);
  EXPECT_EQ(b.extra, R"(grphndllvena\L]K[Tgcyllyxewmag_aUaO_dpofzntpfdinWJ^QM_ei)");
}

TEST(NexmarkReferenceTest, FlinkOffsetsAndRateMatchTheReferenceModel) {
  // Flink's nexmark source at parallelism 1: event id = 1 + event number, event number = 1 + i;
  // 1,000,000 events/s, so timestamps advance by 1 ms every 1000 events.
  NexmarkConfig config;
  config.first_event_id = 1;
  config.first_event_number = 1;
  config.rate = 1000000;
  auto gen = NexmarkGenerator::Create(config);
  ASSERT_TRUE(gen.ok());
  struct Expected {
    int64_t index, event_id, id, seller, category, initial_bid;
    TimestampMs date_time, expires;
  };
  const Expected expected[] = {
      {49, 51, 1003, 1000, 11, 5037490, 1436918400000, 1436918400001},
      {1000, 1002, 1061, 1000, 12, 2597, 1436918400001, 1436918400003},
      {123451, 123453, 8409, 3400, 14, 218, 1436918400123, 1436918400125},
  };
  for (const Expected& e : expected) {
    EXPECT_EQ(gen->EventId(e.index), e.event_id);
    ASSERT_EQ(gen->KindAt(e.index), NexmarkKind::kAuction) << e.index;
    NexmarkAuction a;
    gen->GenerateAuction(e.index, &a);
    EXPECT_EQ(a.id, e.id) << e.index;
    EXPECT_EQ(a.seller, e.seller) << e.index;
    EXPECT_EQ(a.category, e.category) << e.index;
    EXPECT_EQ(a.initialBid, e.initial_bid) << e.index;
    EXPECT_EQ(a.dateTime, e.date_time) << e.index;
    EXPECT_EQ(a.expires, e.expires) << e.index;
  }
}

}  // namespace
}  // namespace flow::rt
